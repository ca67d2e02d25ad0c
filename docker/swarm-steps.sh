# docker/swarm-steps.sh - the swarm part of docker/test.sh (sourced by it; uses its DOCKER,
# WORK, APP_IMAGE, LB_IMAGE, LOAD_CONNECTIONS and its helpers step, pass, fail, elapsed,
# free_port, lb_up, hog_start, hog_sample, hog_stop). docker/stack.yaml deployed on a
# single-node swarm, then under a bounded autocannon load through HAProxy (small and medium
# requests, every answer checked), each operation beside a CPU hog (test.sh's noisy neighbour,
# started before the load, removed when the operation's step ends):
#   1. a rolling update to a new image tag: 0 failed requests
#   2. scale 2 -> 4 -> 2: 0 failed
#   3. SIGKILL of one replica's process: 0 failed, the swarm replaces it
#   4. a bad release (its workers cannot load their kernels, so /readyz never turns 200)
#      rolls back by itself: 0 failed, the old version still answering
#   5. the API key from the swarm secret is enforced: 401 without it
# swarm_cleanup removes the stack, the secret and the image tags it made, and leaves the
# swarm if it joined one.

STACK=tns$$
SECRET=$STACK-api-keys
SWARM_REPLICAS=2
SWARM_TIMEOUT=240 # seconds for any one convergence (a rolling update took 77-104 s beside the CPU hogs)
TAG_A=tensor-norm-service:swarm-a
TAG_B=tensor-norm-service:swarm-b
TAG_BAD=tensor-norm-service:swarm-bad
swarm_joined=""
swarm_load_pid=""
swarm_grpc_pid=""

swarm_cleanup() {
  [ -n "$swarm_load_pid" ] && kill "$swarm_load_pid" 2>/dev/null
  [ -n "$swarm_grpc_pid" ] && kill "$swarm_grpc_pid" 2>/dev/null
  $DOCKER stack rm "$STACK" >/dev/null 2>&1
  # the stack's containers stop (drain) before its network can go
  for _ in $(seq 1 120); do
    [ -z "$($DOCKER ps -aq -f "label=com.docker.stack.namespace=$STACK")" ] && break
    sleep 0.5
  done
  $DOCKER secret rm "$SECRET" >/dev/null 2>&1
  [ -n "$swarm_joined" ] && $DOCKER swarm leave --force >/dev/null 2>&1 && echo "left the swarm this script made"
  $DOCKER rmi "$TAG_A" "$TAG_B" "$TAG_BAD" >/dev/null 2>&1
  return 0
}

# the app containers of the stack that are running, as "id image status" lines
app_containers() {
  $DOCKER ps -f "label=com.docker.swarm.service.name=${STACK}_app" --format '{{.ID}} {{.Image}} {{.Status}}'
}

# converged: exactly $1 app containers run, all of image $2 and healthy, none of them the
# container $gone, HAProxy has $1 servers UP in its HTTP and gRPC backends, and no update is
# under way (the update state, when there is one, is $3)
gone=""
converged() {
  local want=$1 image=$2 update_state=${3:-} lines healthy state
  lines=$(app_containers)
  [ "$(printf '%s' "$lines" | grep -c .)" -eq "$want" ] || return 1
  [ -z "$gone" ] || ! printf '%s\n' "$lines" | grep -q "^${gone:0:12} " || return 1
  healthy=$(printf '%s\n' "$lines" | grep -c "^[0-9a-f]* $image Up .*(healthy)" || true)
  [ "$healthy" -eq "$want" ] || return 1
  if [ -n "$update_state" ]; then
    state=$($DOCKER service inspect -f '{{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}' "${STACK}_app")
    [ "$state" = "$update_state" ] || return 1
  fi
  [ "$(lb_up "$(swarm_lb)")" -eq "$want" ] && [ "$(lb_grpc_up "$(swarm_lb)")" -eq "$want" ]
}

# lb_story LB SINCE: what HAProxy saw since SINCE (epoch seconds), for a step that failed: its
# servers going DOWN and UP (with the check's reason), the app's containers turning unhealthy, killed
# and started (swarm replaces an unhealthy task), and HAProxy's 5xx answers counted by backend/server
# and termination state (a server's own 503 ends "----"; HAProxy's, with no server left, "SC--"), then
# every request it logged (dontlog-normal: those that went wrong, were retried or were cut off, with
# their timers, server and termination state; one its client gave up on ends CD)
lb_story() {
  local logs
  logs=$($DOCKER logs --timestamps --since "$2" "$1" 2>&1)
  echo "HAProxy's servers since the load started (DOWN/UP, with the reason):" >&2
  printf '%s\n' "$logs" | grep -E 'is (DOWN|UP)|going DOWN' | grep -v '^[^ ]* Server ' | cut -c1-260 | tail -40 >&2
  echo "the app's containers since the load started (Docker's events: health, kill, start):" >&2
  app_events "$2" --filter event=health_status --filter event=kill --filter event=start 2>&1 | grep -v ': healthy' | tail -40 >&2
  echo "HAProxy's 5xx answers by backend/server, status and termination state:" >&2
  printf '%s\n' "$logs" | awk '$7 ~ /^5[0-9][0-9]$/ { n[$5 " " $7 " " $11]++ } END { for (k in n) print "  " n[k] " x " k }' | sort -rn >&2
  echo "HAProxy's logged requests since the load started:" >&2
  printf '%s\n' "$logs" | grep -E '" *(POST|GET) |inference\.GRPC' | head -80 | cut -c1-260 >&2
}

# app_events SINCE [FILTER...]: Docker's events for the stack's app containers since SINCE (epoch
# seconds) until now, as "time action name" lines
app_events() {
  local since=$1
  shift
  $DOCKER events --since "$since" --until "$(date +%s)" --filter "label=com.docker.swarm.service.name=${STACK}_app" "$@" \
    --format '{{.Time}} {{.Action}} {{.Actor.Attributes.name}}'
}

swarm_lb() { $DOCKER ps -q -f "label=com.docker.swarm.service.name=${STACK}_lb" | head -1; }

# waits for converged "$@" for up to SWARM_TIMEOUT seconds of the clock (a check runs several docker
# commands, which on a busy host take seconds); prints the seconds it took since $t_action
wait_converged() {
  local deadline=$(($(date +%s) + SWARM_TIMEOUT))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    converged "$@" && { elapsed "$t_action"; return 0; }
    sleep 0.5
  done
  echo "not converged after ${SWARM_TIMEOUT} s: $(app_containers | tr '\n' ';') update $($DOCKER service inspect -f '{{if .UpdateStatus}}{{.UpdateStatus.State}}: {{.UpdateStatus.Message}}{{end}}' "${STACK}_app") LB UP $(lb_up "$(swarm_lb)")" >&2
  swarm_story
  return 1
}

# swarm_story: why an operation did not converge (an update pauses or rolls back on a task and
# names only the task): every task's state and error, the update's own events, and each app
# container's end (exit code, OOM, health) with its last log lines
swarm_story() {
  $DOCKER service ps --no-trunc --format '  task {{.Name}} {{.ID}} {{.Image}} {{.DesiredState}} / {{.CurrentState}} {{.Error}}' "${STACK}_app" 2>&1 | head -12 >&2 || true
  echo "the service's events since the load started (update state changes):" >&2
  $DOCKER events --since "${load_since:-0}" --until "$(date +%s)" --filter type=service --filter "service=${STACK}_app" \
    --format '  {{.Time}} {{.Action}} {{range $k, $v := .Actor.Attributes}}{{$k}}={{$v}} {{end}}' 2>&1 | tail -20 >&2 || true
  echo "the app's containers (exit code, OOM-killed, health and its last checks, last log lines):" >&2
  local c
  for c in $($DOCKER ps -aq -f "label=com.docker.swarm.service.name=${STACK}_app"); do
    $DOCKER inspect -f '  {{.Config.Image}} task {{index .Config.Labels "com.docker.swarm.task.id"}}: {{.State.Status}}, exit {{.State.ExitCode}}, OOM {{.State.OOMKilled}}, started {{.State.StartedAt}}, finished {{.State.FinishedAt}}, health {{if .State.Health}}{{.State.Health.Status}} {{range .State.Health.Log}}[{{.ExitCode}} {{.End}}] {{end}}{{end}}' "$c" >&2 || true
    $DOCKER logs --tail 4 "$c" 2>&1 | cut -c1-240 | sed 's/^/    /' >&2 || true
  done
}

# start_load NAME: the CPU hog NAME, then the load; the operation starts 3 s into the load
start_load() {
  hog_start "$1"
  # bounded: longer than any operation may take to converge (step 2 waits twice)
  API_KEY=$KEY node docker/load.mjs "http://127.0.0.1:$SWARM_PORT" $((2 * SWARM_TIMEOUT + 30)) "$LOAD_CONNECTIONS" >"$WORK/swarm-load.json" 2>"$WORK/swarm-load.err" &
  swarm_load_pid=$!
  API_KEY=$KEY node docker/grpc-load.mjs "127.0.0.1:$SWARM_GRPC_PORT" $((2 * SWARM_TIMEOUT + 30)) "$GRPC_WORKERS" >"$WORK/swarm-grpc.json" 2>"$WORK/swarm-grpc.err" &
  swarm_grpc_pid=$!
  load_since=$(date +%s)
  local t_load
  t_load=$(date +%s.%N)
  sleep 1 # past load.mjs's checks of the expected answers, into autocannon's load
  hog_sample
  # the load is running (3 s of it, however long the sample took) before the operation starts
  sleep "$(awk -v e="$(elapsed "$t_load")" 'BEGIN { s = 3 - e; print (s > 0 ? s : 0) }')"
  t_action=$(date +%s.%N)
}

# stops the load (SIGTERM: autocannon stops and reports), then the hog; fails the step on any
# failed request
# `cut_ok` (the SIGKILL step): answers the killed replica was cut off in the middle of may fail, as
# many as HAProxy logged ending with termination state SD (the server aborted during the data phase):
# no load balancer can retry an answer it has half sent, and autocannon then waits out its timeout on
# that connection, or, when the connection closes, checks what came of it (a wrong body that is the
# start of a right one, counted as `truncated` by docker/load.mjs). Every other failure still fails
# the step, a wrong body that is not such a start among them, and no other step allows any
stop_load() {
  local what=$1 converge=$2 cut_ok=${3:-} rc=0 grpc_rc=0 figures retried grpc_met unhealthy cut=0
  sleep 2 # and goes on a little after the convergence
  kill -TERM "$swarm_load_pid" 2>/dev/null || true # already ended on its own: its figures say why
  kill -TERM "$swarm_grpc_pid" 2>/dev/null || true
  wait "$swarm_load_pid" || rc=$?
  swarm_load_pid=""
  wait "$swarm_grpc_pid" || grpc_rc=$?
  swarm_grpc_pid=""
  hog_stop
  [ "$rc" -eq 0 ] && [ "$grpc_rc" -eq 0 ] || lb_story "$(swarm_lb)" "$load_since"
  cat "$WORK/swarm-grpc.err" >&2
  grpc_load_check "$what" "$WORK/swarm-grpc.json" "$grpc_rc"
  cat "$WORK/swarm-load.err" >&2
  figures=$(cat "$WORK/swarm-load.json")
  echo "load figures: $figures"
  # with dontlog-normal HAProxy logs only requests that met an error or were retried; the retried
  # ones have a non-zero retries count (the last of its five connection counts, "+" if redispatched)
  retried=$($DOCKER logs --since "$load_since" "$(swarm_lb)" 2>&1 | grep -cE '/\+?[1-9][0-9]* [0-9]+/[0-9]+ "POST /v1/' || true)
  # gRPC calls that met an error at HAProxy (a dead replica's streams); the client made them good
  grpc_met=$($DOCKER logs --since "$load_since" "$(swarm_lb)" 2>&1 | grep -c 'inference.GRPCInferenceService/' || true)
  # tasks Docker's health check found unhealthy, which swarm replaces: a replica that is only busy never should be
  unhealthy=$(app_events "$load_since" --filter event=health_status 2>/dev/null | grep -c 'unhealthy' || true)
  if [ "$rc" -ne 0 ] && [ -n "$cut_ok" ]; then
    cut=$($DOCKER logs --since "$load_since" "$(swarm_lb)" 2>&1 | grep -cE ' http replicas/[^ ]+ .* SD-- .*"POST /v1/' || true)
    node -e "const f=JSON.parse(process.argv[1]);process.exit(f.failed<=Number(process.argv[2])&&f.non2xx===0&&f.wrongBody<=f.truncated&&f.answered>0?0:1)" "$figures" "$cut" && rc=0
    echo "answers cut off by the kill (HAProxy SD): $cut; failed requests: $(node -e "console.log(JSON.parse(process.argv[1]).failed)" "$figures")"
  fi
  [ "$rc" -eq 0 ] || fail "$what: failed requests: $figures"
  pass "$what: $(node -e "const f=JSON.parse(process.argv[1]);console.log(f.answered+' requests ('+f.correct+' checked 200), '+f.non2xx+' non-2xx, '+f.failed+' failed in '+f.seconds+' s, p99 '+f.latencyP99ms+' ms, converged in '+process.argv[2]+' s; HAProxy logged '+process.argv[3]+' retried')" "$figures" "$converge" "$retried"); $grpc_summary, $grpc_met gRPC calls logged by HAProxy with an error; $unhealthy tasks turned unhealthy; $hog_figures"
}

swarm_test() {
  step "4/5 swarm: docker/stack.yaml, rolling update, scaling, a replica killed, a bad release, under load"
  case "$($DOCKER info -f '{{.Swarm.LocalNodeState}}')" in
    inactive)
      $DOCKER swarm init --advertise-addr 127.0.0.1 >/dev/null || fail "docker swarm init"
      swarm_joined=1 ;;
    # its other nodes could not run the local images, and this script sees only this node
    *) fail "the engine is in a swarm already ($($DOCKER info -f '{{.Swarm.LocalNodeState}}')): run this test on an engine outside any swarm" ;;
  esac

  # two releases of the same code under two tags, and a broken build of it
  $DOCKER tag "$APP_IMAGE" "$TAG_A"
  printf 'FROM %s\nLABEL org.opencontainers.image.version=swarm-b\n' "$APP_IMAGE" | $DOCKER build -q -t "$TAG_B" - >/dev/null || fail "build $TAG_B"
  printf 'FROM %s\nUSER root\nRUN echo %s > dist/pool/worker.js\nUSER node\n' "$APP_IMAGE" \
    "'throw new Error(\"a broken build\")'" | $DOCKER build -q -t "$TAG_BAD" - >/dev/null || fail "build $TAG_BAD"

  KEY=$(node -e "console.log(require('crypto').randomBytes(16).toString('hex'))")
  printf '%s\n' "$KEY" | $DOCKER secret create "$SECRET" - >/dev/null || fail "docker secret create"
  SWARM_PORT=$(free_port)
  SWARM_GRPC_PORT=$(free_port)
  deploy() {
    APP_IMAGE=$1 LB_IMAGE=$LB_IMAGE LB_PORT=$SWARM_PORT LB_GRPC_PORT=$SWARM_GRPC_PORT API_KEYS_SECRET=$SECRET REPLICAS=$SWARM_REPLICAS \
      $DOCKER stack deploy --resolve-image never -c docker/stack.yaml "$STACK" >"$WORK/deploy.txt" 2>&1 \
      || { cat "$WORK/deploy.txt"; fail "docker stack deploy"; }
  }
  t_action=$(date +%s.%N)
  deploy "$TAG_A"
  secs=$(wait_converged $SWARM_REPLICAS "$TAG_A") || fail "the stack did not come up"
  pass "stack $STACK deployed: $SWARM_REPLICAS replicas healthy (/readyz) and UP in HAProxy after $secs s; HAProxy published on the node's port $SWARM_PORT (host mode), the load sent to 127.0.0.1"
  API_KEY=$KEY node docker/smoke.mjs "http://127.0.0.1:$SWARM_PORT" 1 >/dev/null || fail "requests through the swarm's HAProxy"
  API_KEY=$KEY node docker/grpc-load.mjs "127.0.0.1:$SWARM_GRPC_PORT" 1 2 >/dev/null || fail "gRPC through the swarm's HAProxy (with the API key)"
  # each replica, asked directly on the overlay network from the LB's container
  mapfile -t ips < <($DOCKER exec "$(swarm_lb)" getent ahostsv4 tasks.app | awk '{print $1}' | sort -u)
  [ "${#ips[@]}" -eq $SWARM_REPLICAS ] || fail "tasks.app: ${#ips[@]} addresses (${ips[*]}), expected $SWARM_REPLICAS"
  for ip in "${ips[@]}"; do
    limits=$($DOCKER exec "$(swarm_lb)" node -e "Promise.all([fetch('http://$ip:8080/readyz').then(r=>r.json()), fetch('http://$ip:8080/metrics').then(r=>r.text())]).then(([r,t])=>console.log(r.workers+' '+(/^norm_tensor_memory_limit_bytes (\\d+)/m.exec(t)||[])[1]))" || true)
    [ "$limits" = "1 536870912" ] || fail "replica $ip: workers and tensor memory limit $limits, expected 1 and 536870912 (1 CPU, half of 1 GiB)"
  done
  pass "RMSNorm and LayerNorm answers checked through HAProxy; every replica reads its limits from its cgroup: 1 worker (1 CPU), tensor memory 512 MiB (half of 1 GiB)"

  start_load update
  deploy "$TAG_B"
  secs=$(wait_converged $SWARM_REPLICAS "$TAG_B" completed) || fail "rolling update"
  stop_load "1. rolling update $TAG_A -> $TAG_B (start-first, one at a time)" "$secs"

  start_load scale
  $DOCKER service scale -d "${STACK}_app=4" >/dev/null || fail "docker service scale to 4"
  up=$(wait_converged 4 "$TAG_B") || fail "scale to 4"
  t_action=$(date +%s.%N)
  $DOCKER service scale -d "${STACK}_app=2" >/dev/null || fail "docker service scale to 2"
  down=$(wait_converged 2 "$TAG_B") || fail "scale back to 2"
  stop_load "2. scale 2 -> 4 -> 2" "$up + $down"

  start_load kill
  victim=$($DOCKER ps -q -f "label=com.docker.swarm.service.name=${STACK}_app" | head -1)
  kill -9 "$($DOCKER inspect -f '{{.State.Pid}}' "$victim")"
  gone=$victim # converged once a new task has taken its place
  secs=$(wait_converged $SWARM_REPLICAS "$TAG_B") || fail "the killed replica was not replaced"
  gone=""
  stop_load "3. SIGKILL of replica ${victim:0:12} (host PID of its tini); replaced by a new task" "$secs" cut-ok

  start_load bad-release
  $DOCKER service update -d --no-resolve-image --image "$TAG_BAD" "${STACK}_app" >/dev/null || fail "docker service update to $TAG_BAD"
  secs=$(wait_converged $SWARM_REPLICAS "$TAG_B" rollback_completed) || fail "the bad release was not rolled back"
  stop_load "4. bad release $TAG_BAD (/readyz 503 \"failed\") rolled back by itself to $TAG_B" "$secs"
  # the bad release did start, and its readiness never turned 200 (Docker keeps its last few checks)
  bad=$($DOCKER ps -aq -f "label=com.docker.swarm.service.name=${STACK}_app" -f "ancestor=$TAG_BAD" | head -1)
  [ -n "$bad" ] || fail "no task of the bad release was ever started"
  checks=$($DOCKER inspect -f '{{range .State.Health.Log}}{{.ExitCode}}{{end}}' "$bad")
  [ -n "$checks" ] && [[ "$checks" != *0* ]] || fail "the bad release's healthchecks: exit codes $checks, expected only failures"
  # and it failed for the reason the release is bad: it ran, but its workers could not load their kernels
  $DOCKER logs "$bad" 2>&1 | grep -q 'the workers cannot load their kernels' || fail "the bad release did not log why it was not ready"
  echo "the bad release's task ran, logged that its workers cannot load their kernels, and its last ${#checks} healthchecks of /readyz failed; swarm: $($DOCKER service inspect -f '{{.UpdateStatus.Message}}' "${STACK}_app")"

  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
    --data '{"input":{"shape":[1,2],"data":[1,2]}}' "http://127.0.0.1:$SWARM_PORT/v1/rmsnorm" || true)
  [ "$code" = 401 ] || fail "without the API key: $code, expected 401"
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' -H "authorization: Bearer $KEY" \
    --data '{"input":{"shape":[1,2],"data":[1,2]}}' "http://127.0.0.1:$SWARM_PORT/v1/rmsnorm" || true)
  [ "$code" = 200 ] || fail "with the API key from the secret: $code, expected 200"
  pass "5. the API key from the swarm secret (API_KEYS_FILE): 401 without it, 200 with it"
  step_done
}
