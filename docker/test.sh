#!/usr/bin/env bash
# docker/test.sh - the deployment, built and run for real (npm run test:docker; .ci/run).
#   0. a Docker engine: the one DOCKER_HOST (or /var/run/docker.sock) points at, else
#      ../shared/tools/dockerd-up.sh starts one; every node:<major>-slim the Dockerfiles name:
#      pulled, else built locally with ../shared/tools/node-base-image.sh (no registry is
#      reachable here)
#   1. lint the Dockerfiles (dockerfilelint), validate docker/compose.yaml
#      and docker/stack.yaml (docker-compose config -q) and the Kubernetes manifests rendered
#      from docker/k8s by Debian's kubectl 1.20 (kubectl kustomize; schemas from
#      kubernetes-models, see docker/validate-k8s.mjs)
#   2. build the images; run the service with a 1-CPU quota and a read-only root; wait for
#      healthy; real RMSNorm and LayerNorm requests with checked numbers; non-root; no
#      sources, tests or dev dependencies in the image; `docker stop` drains requests in
#      flight and the exit code is 0; with --memory 512m, bursts of concurrent 16 MiB requests
#      get only 200 (checked) or 503 with Retry-After, and the container is never OOM-killed
#   3. compose: 3 replicas behind HAProxy on 127.0.0.1; autocannon through it for
#      LOAD_SECONDS; one replica SIGKILLed (host PID) in the middle; zero failed requests
#      and the replica back in rotation
#   4. swarm: docker/stack.yaml on a single-node swarm; a rolling update, scaling 2 -> 4 -> 2,
#      a replica SIGKILLed and a bad release rolled back, each under load with 0 failed
#      requests (but answers the kill cut off half sent, which HAProxy logs as SD); the API key
#      from a swarm secret (docker/swarm-steps.sh)
#   5. clean up (containers, the stack, the swarm it made, networks, the dockerd it started)
#      on any exit; images stay (dangling ones are pruned when the engine is the one it started).
# A noisy neighbour: steps 3 and 4's operations under load each run beside a CPU hog, a
# container of the Dockerfile's node:<major>-slim running a busy loop with --cpus 1, started
# before the load and removed when the step ends (or on any exit); each step prints the hog's
# CPU use during the load (docker stats) and its CPU time over the step. NOISY_NEIGHBOUR=0
# runs without it.
# Root is needed (apt-get, dockerd). Needs `npm ci` first (dockerfilelint, autocannon).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TOOLS=${TOOLS:-$ROOT/../shared/tools}
DOCKERD_DIR=${DOCKERD_DIR:-/var/tmp/dockerd}
NODE_BASE_DIR=${NODE_BASE_DIR:-/var/tmp/node-base}
KUBECTL_DIR=${KUBECTL_DIR:-/var/tmp/kubectl-1.20}
LOAD_SECONDS=${LOAD_SECONDS:-12}
LOAD_CONNECTIONS=${LOAD_CONNECTIONS:-16}
KILL_AFTER=${KILL_AFTER:-4} # seconds into the load
GRPC_WORKERS=${GRPC_WORKERS:-4} # docker/grpc-load.mjs beside the HTTP load: half unary, half streams
NOISY_NEIGHBOUR=${NOISY_NEIGHBOUR:-1} # 0: steps 3 and 4 without the CPU hog beside them
REPLICAS=3
LB_PORT=8080 # replaced by a free port in step 3
LB_GRPC_PORT=8081 # likewise
APP_IMAGE=tensor-norm-service:latest
LB_IMAGE=tensor-norm-lb:latest
PROJECT=tnstest$$
SINGLE=tnstest$$-single
WORK=$(mktemp -d)
export DOCKER_BUILDKIT=1
# Debian's client, the one dockerd-up.sh installs and builds with (a newer client
# elsewhere on PATH may lack buildx); docker-compose v1 calls the first `docker` on PATH
export PATH=/usr/bin:$PATH
DOCKER=/usr/bin/docker
export DOCKER

t_all=$(date +%s.%N)
passed=0
started_dockerd=""
load_pid=""
grpc_load_pid=""
hog="" # the CPU hog container running now (hog_start), by name

elapsed() { awk -v now="$(date +%s.%N)" -v t0="$1" 'BEGIN { printf "%.1f", now - t0 }'; }
step() { t_step=$(date +%s.%N); printf '\n=== %s\n' "$*"; }
step_done() { printf '[time] %s s\n' "$(elapsed "$t_step")"; }
pass() { passed=$((passed + 1)); printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*" >&2; exit 1; }
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
compose() { LB_PORT=$LB_PORT LB_GRPC_PORT=$LB_GRPC_PORT docker-compose -p "$PROJECT" -f docker/compose.yaml "$@"; }

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  printf '\n=== 5/5 clean up\n'
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
  [ -n "$grpc_load_pid" ] && kill "$grpc_load_pid" 2>/dev/null
  if [ -n "${DOCKER_HOST:-}" ] || [ -S /var/run/docker.sock ]; then
    hog_cleanup
    $DOCKER rm -f "$SINGLE" >/dev/null 2>&1
    [ -f docker/compose.yaml ] && compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1
    swarm_cleanup
  fi
  if [ -n "$started_dockerd" ]; then
    # superseded builds of the images; only in an engine this script started
    $DOCKER image prune -f >/dev/null 2>&1
    kill "$started_dockerd" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$started_dockerd" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$started_dockerd" 2>/dev/null && echo "dockerd $started_dockerd still running" >&2
    echo "stopped the dockerd this script started (pid $started_dockerd)"
  fi
  rm -rf "$WORK"
  printf '[time] total %s s\n' "$(elapsed "$t_all")"
  if [ "$rc" -eq 0 ]; then echo "docker: $passed passed, 0 failed"; else echo "docker: $passed passed, 1 failed"; fi
  exit "$rc"
}
# servers HAProxy (container $1) has UP in the backend, from its stats CSV (field 18 is the status)
# lb_up LB [BACKEND,SERVER-PREFIX]: servers UP in HAProxy's backend (the HTTP one unless told)
lb_up() { $DOCKER exec "$1" node -e "fetch('http://127.0.0.1:8404/stats;csv').then(r=>r.text()).then(t=>console.log(t.split('\n').filter(l=>l.startsWith('${2:-replicas,app}')&&l.split(',')[17]==='UP').length))" 2>/dev/null || echo 0; }
lb_grpc_up() { lb_up "$1" grpc_replicas,grpc; }

# grpc_load_check NAME FILE RC: fails the step on any gRPC request without its right answer,
# else prints the figures (docker/grpc-load.mjs)
grpc_load_check() {
  local figures
  figures=$(cat "$2")
  echo "gRPC load figures ($1): $figures"
  [ "$3" -eq 0 ] || fail "$1: gRPC requests without their right answer: $figures"
  grpc_summary=$(node -e "const f=JSON.parse(process.argv[1]);console.log('gRPC '+f.sent+' requests ('+f.correct+' answered right, '+f.resent+' sent again, '+f.streamsEndedEarly+' of '+f.streams+' streams ended early), '+f.failed+' failed, p99 '+f.latencyP99ms+' ms')" "$figures")
}

# ---- the noisy neighbour: a CPU hog beside an operation under load ----------------------
# hog_start NAME: a container of the Dockerfile's node:<major>-slim (HOG_IMAGE, set in step 0)
# running a busy loop with --cpus 1, named and labelled with this run's $PROJECT so that
# hog_cleanup removes exactly the ones this run made; started before the step's load
hog_start() {
  hog=""
  [ "$NOISY_NEIGHBOUR" = 0 ] && { echo "noisy neighbour: none (NOISY_NEIGHBOUR=0)"; return 0; }
  hog=$PROJECT-hog-$1
  $DOCKER run -d --name "$hog" --label "tnstest.hog=$PROJECT" --cpus 1 --network none --read-only \
    --entrypoint node "$HOG_IMAGE" -e 'for(;;){}' >/dev/null || fail "start the CPU hog $hog"
  hog_t0=$(date +%s.%N)
  echo "noisy neighbour: $hog ($HOG_IMAGE, node -e 'for(;;){}', --cpus 1) started"
}
# hog_sample: its CPU use once, while the load runs, beside the engine's other containers'
# (one docker stats --no-stream, which samples for about 2 s; all the engine's containers
# share one CPU weight against the host's other processes, so on a busy host the hog gets
# what it takes from the replicas, not a full CPU)
hog_sample() {
  local stats others
  hog_cpu=""
  [ -n "$hog" ] || return 0
  stats=$($DOCKER stats --no-stream --format '{{.Name}} {{.CPUPerc}}' 2>/dev/null) || true
  hog_cpu=$(awk -v h="$hog" '$1 == h { print $2 }' <<<"$stats")
  others=$(awk -v h="$hog" '$1 != h { n++; s += $2 } END { printf "%d other containers %.1f%% together", n, s }' <<<"$stats")
  echo "noisy neighbour: $hog at ${hog_cpu:-?} CPU during the load, the engine's $others (docker stats --no-stream)"
}
# hog_stop: fails the step if the hog did not run throughout (it must still be running), else
# prints its CPU time over the step and removes it; sets hog_figures for the step's summary
hog_stop() {
  local state pid cpu_s
  hog_figures="no hog"
  [ -n "$hog" ] || return 0
  state=$($DOCKER inspect -f '{{.State.Running}} {{.State.Pid}}' "$hog" 2>/dev/null) || state="gone 0"
  [ "${state% *}" = true ] || fail "the CPU hog $hog did not run throughout the step (running: ${state% *})"
  pid=${state#* }
  # user + system CPU seconds of its busy loop, from the host's view of the process
  cpu_s=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$pid/stat" 2>/dev/null || echo "?")
  hog_figures="hog ${hog_cpu:-?} CPU in the load, ${cpu_s} s CPU over $(elapsed "$hog_t0") s"
  echo "noisy neighbour: $hog ran ${cpu_s} s of CPU over $(elapsed "$hog_t0") s; removed"
  $DOCKER rm -f "$hog" >/dev/null 2>&1
  hog=""
}
# every hog this run made (by its label), on any exit
hog_cleanup() {
  local ids
  ids=$($DOCKER ps -aq -f "label=tnstest.hog=$PROJECT" 2>/dev/null)
  [ -z "$ids" ] || $DOCKER rm -f $ids >/dev/null 2>&1
  hog=""
}

# shellcheck source=docker/swarm-steps.sh
source "$ROOT/docker/swarm-steps.sh"

trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x node_modules/.bin/dockerfilelint ] || fail "node_modules is missing dockerfilelint: run npm ci first"

# ---- 0. engine and base image ---------------------------------------------------------
# the base images the Dockerfiles name (FROM node:<major>-slim), each major once
mapfile -t node_majors < <(sed -nE 's/^FROM node:([0-9]+)-slim.*/\1/p' docker/Dockerfile docker/lb/Dockerfile | sort -u)
[ "${#node_majors[@]}" -gt 0 ] || fail "no FROM node:<major>-slim in the Dockerfiles"
step "0/5 Docker engine and node:$(IFS=,; echo "${node_majors[*]}")-slim"
if [ -z "${DOCKER_HOST:-}" ] && ! { [ -S /var/run/docker.sock ] && $DOCKER info >/dev/null 2>&1; }; then
  sock=unix://$DOCKERD_DIR/docker.sock
  if command -v docker-compose >/dev/null && DOCKER_HOST=$sock $DOCKER info >/dev/null 2>&1; then
    export DOCKER_HOST=$sock # someone else's dockerd: used, not stopped
  else
    eval "$(bash "$TOOLS/dockerd-up.sh" "$DOCKERD_DIR")"
    started_dockerd=$DOCKERD_PID
  fi
fi
$DOCKER info >/dev/null 2>&1 || fail "no Docker engine at ${DOCKER_HOST:-/var/run/docker.sock}"
echo "engine: $($DOCKER version -f '{{.Server.Version}}') at ${DOCKER_HOST:-/var/run/docker.sock}${started_dockerd:+ (started here, pid $started_dockerd)}"
for major in "${node_majors[@]}"; do
  base=node:$major-slim
  if ! $DOCKER image inspect "$base" >/dev/null 2>&1; then
    if ! timeout 120 $DOCKER pull -q "$base" >/dev/null 2>&1; then
      echo "$base cannot be pulled: building it with node-base-image.sh"
      NODE_MAJOR=$major ENGINE=docker WORK=$NODE_BASE_DIR bash "$TOOLS/node-base-image.sh" 2>&1 | grep -E '^\[time\]|check:' || true
    fi
  fi
  $DOCKER image inspect "$base" >/dev/null 2>&1 || fail "no $base image"
  echo "$base: node $($DOCKER run --rm --entrypoint node "$base" --version)"
done
# the noisy neighbour's image: the service's own base
HOG_IMAGE=node:$(sed -nE 's/^FROM node:([0-9]+)-slim.*/\1/p' docker/Dockerfile | head -1)-slim
step_done

# ---- 1. static checks -----------------------------------------------------------------
step "1/5 lint the Dockerfiles, validate compose, the swarm stack and Kubernetes manifests"
for f in docker/Dockerfile docker/lb/Dockerfile; do
  node_modules/.bin/dockerfilelint "$f" >"$WORK/lint.txt" 2>&1 || { cat "$WORK/lint.txt"; fail "dockerfilelint $f"; }
  pass "dockerfilelint $f"
done
LB_PORT=8080 docker-compose -f docker/compose.yaml config -q || fail "docker-compose config"
pass "docker-compose config -q docker/compose.yaml"
API_KEYS_SECRET=x docker-compose -f docker/stack.yaml config -q || fail "docker-compose config docker/stack.yaml"
pass "docker-compose config -q docker/stack.yaml (the swarm stack, deployed in step 4)"
# Debian's kubectl 1.20 (kustomize v2.0.3), the oldest the kustomization is written for:
# unpacked from its package, not installed (another kubectl may own /usr/bin/kubectl)
kubectl=$KUBECTL_DIR/usr/bin/kubectl
if [ ! -x "$kubectl" ]; then
  mkdir -p "$KUBECTL_DIR"
  (cd "$KUBECTL_DIR" && { apt-get download kubernetes-client >/dev/null 2>&1 || { apt-get update -qq && apt-get download kubernetes-client >/dev/null 2>&1; }; } \
    && dpkg-deb -x kubernetes-client_*.deb . && rm kubernetes-client_*.deb) || fail "Debian's kubernetes-client could not be fetched"
fi
"$kubectl" kustomize docker/k8s >"$WORK/k8s.yaml" || fail "kubectl kustomize docker/k8s"
node docker/validate-k8s.mjs "$WORK/k8s.yaml" || fail "k8s manifests"
pass "k8s manifests rendered by kubectl kustomize ($("$kubectl" version --client --short 2>/dev/null), Debian's kubernetes-client), valid"
step_done

# ---- 2. one container -----------------------------------------------------------------
step "2/5 build the images, run one container"
t0=$(date +%s.%N)
$DOCKER build -q -f docker/Dockerfile -t "$APP_IMAGE" . >/dev/null || fail "docker build $APP_IMAGE"
pass "built $APP_IMAGE ($(elapsed "$t0") s, $($DOCKER image inspect -f '{{.Size}}' "$APP_IMAGE" | awk '{printf "%d MB", $1/1e6}'))"
t0=$(date +%s.%N)
$DOCKER build -q -t "$LB_IMAGE" docker/lb >/dev/null || fail "docker build $LB_IMAGE"
pass "built $LB_IMAGE ($(elapsed "$t0") s)"

# what the image holds: compiled code and production dependencies (with the vendored
# msgpackr-extract stub they link to), nothing else
contents=$($DOCKER run --rm --user 0 --entrypoint sh "$APP_IMAGE" -c \
  'ls -A /app | tr "\n" " "; echo; for p in typescript vitest autocannon dockerfilelint; do [ ! -e /app/node_modules/$p ] || echo "dev:$p"; done; find /app \( -name "*.test.*" -o -name "*.ts" ! -name "*.d.ts" -o -name ".env*" -o -name "*.pem" -o -name "*.key" \) ! -path "/app/node_modules/*" -print')
[ "$contents" = "dist docs node_modules package.json vendor " ] \
  || fail "image /app holds more than dist, docs (the API reference it serves), node_modules (production), package.json and vendor: $contents"
pass "image /app: dist, production node_modules, package.json; no sources, tests, dev dependencies or secrets"

port=$(free_port)
# LOG_LEVEL=debug: drain-check.mjs waits for the "incoming request" lines (debug) of its requests
$DOCKER run -d --name "$SINGLE" --cpus 1 --read-only -e LOG_LEVEL=debug -p "127.0.0.1:$port:8080" "$APP_IMAGE" >/dev/null
t0=$(date +%s.%N)
for _ in $(seq 1 120); do
  status=$($DOCKER inspect -f '{{.State.Health.Status}}' "$SINGLE")
  [ "$status" = healthy ] && break
  [ "$($DOCKER inspect -f '{{.State.Running}}' "$SINGLE")" = true ] || { $DOCKER logs "$SINGLE" | tail -20; fail "container exited"; }
  sleep 0.5
done
[ "$status" = healthy ] || { $DOCKER logs "$SINGLE" | tail -20; fail "container not healthy: $status"; }
pass "container healthy after $(elapsed "$t0") s (HEALTHCHECK on /healthz)"

node docker/smoke.mjs "http://127.0.0.1:$port" 1 || fail "requests to the container"
pass "RMSNorm and LayerNorm answers checked; 1 worker thread under a 1-CPU quota"

# every process in the container, PID 1 (tini) and the server, runs as uid 1000
# (named by their executable: Node 24 names its main thread, and so the process, "MainThread")
procs=$($DOCKER exec "$SINGLE" sh -c 'for p in /proc/[0-9]*; do exe=$(readlink "$p/exe") || continue; awk -v n="${exe##*/}" "/^Uid:/{print n\":\"\$2}" "$p/status"; done' 2>/dev/null | sort -u | tr '\n' ' ')
echo "processes (name:uid): $procs"
echo "$procs" | grep -q 'tini:1000' && echo "$procs" | grep -q 'node:1000' && ! echo "$procs" | grep -qE ':0( |$)' \
  || fail "processes not all non-root: $procs"
[ "$($DOCKER exec "$SINGLE" cat /proc/1/comm)" = tini ] || fail "PID 1 is not tini"
pass "non-root: tini (PID 1) and node run as uid 1000"

node docker/drain-check.mjs "http://127.0.0.1:$port" "$SINGLE" 4 || { $DOCKER logs "$SINGLE" 2>&1 | tail -20; fail "drain on docker stop"; }
exit_code=$($DOCKER inspect -f '{{.State.ExitCode}}' "$SINGLE")
[ "$exit_code" = 0 ] || { $DOCKER logs "$SINGLE" 2>&1 | tail -20; fail "exit code after docker stop: $exit_code"; }
$DOCKER logs "$SINGLE" 2>&1 | grep -q '"drained"' || fail "no \"drained\" in the server log"
pass "docker stop: 4 large requests in flight all answered 200, server logged drained, exit code 0"
$DOCKER rm "$SINGLE" >/dev/null

# a container with a memory limit takes bursts of concurrent 16 MiB requests: tensor memory is
# sized from its cgroup (half of 512 MiB), so it answers 200 or 503 and is never OOM-killed
port=$(free_port)
$DOCKER run -d --name "$SINGLE" --memory 512m --memory-swap 512m --read-only -p "127.0.0.1:$port:8080" "$APP_IMAGE" >/dev/null
for _ in $(seq 1 120); do
  [ "$($DOCKER inspect -f '{{.State.Health.Status}}' "$SINGLE")" = healthy ] && break
  sleep 0.5
done
limit=$(node -e "fetch(process.argv[1]).then(r=>r.text()).then(t=>console.log((/^norm_tensor_memory_limit_bytes (\\d+)/m.exec(t)||[])[1]))" "http://127.0.0.1:$port/metrics")
[ "$limit" = 268435456 ] || fail "--memory 512m: tensor memory limit $limit, expected 268435456 (half the cgroup limit)"
pass "--memory 512m: MAX_TENSOR_MEMORY_BYTES defaults to half the cgroup limit (256 MiB)"
burst=$(node docker/memory-burst.mjs "http://127.0.0.1:$port" 32,64,32,16) || { $DOCKER logs "$SINGLE" 2>&1 | tail -20; fail "memory bursts: $burst"; }
state=$($DOCKER inspect -f '{{.State.Running}} {{.State.OOMKilled}} {{.RestartCount}}' "$SINGLE")
[ "$state" = "true false 0" ] || fail "after the bursts the container is not running unharmed (running, OOM-killed, restarts): $state"
node -e "fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" "http://127.0.0.1:$port/readyz" || fail "/readyz after the bursts"
node docker/smoke.mjs "http://127.0.0.1:$port" >/dev/null || fail "requests after the bursts"
usage=$($DOCKER stats --no-stream --format '{{.MemUsage}}' "$SINGLE")
pass "--memory 512m, bursts of 32, 64, 32 and 16 concurrent 16 MiB requests: $burst; running, not OOM-killed, 0 restarts, ready, memory $usage"
$DOCKER rm -f "$SINGLE" >/dev/null
step_done

# ---- 3. compose: replicas behind the load balancer ----------------------------------------
step "3/5 compose: $REPLICAS replicas behind HAProxy, SIGKILL one under load"
LB_PORT=$(free_port)
LB_GRPC_PORT=$(free_port)
compose up -d --no-build --scale app=$REPLICAS >"$WORK/up.txt" 2>&1 || { cat "$WORK/up.txt"; fail "docker-compose up"; }
lb=$(compose ps -q lb)
mapfile -t apps < <(compose ps -q app)
[ "${#apps[@]}" -eq $REPLICAS ] || fail "expected $REPLICAS app containers, got ${#apps[@]}"

healthy_count() { local n=0 c; for c in "${apps[@]}"; do [ "$($DOCKER inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$c")" = healthy ] && n=$((n + 1)); done; echo $n; }

t0=$(date +%s.%N)
for _ in $(seq 1 120); do
  [ "$(healthy_count)" -eq $REPLICAS ] && [ "$(lb_up "$lb")" -eq $REPLICAS ] && [ "$(lb_grpc_up "$lb")" -eq $REPLICAS ] && break
  sleep 0.5
done
[ "$(healthy_count)" -eq $REPLICAS ] || { compose logs --tail 20; fail "replicas not healthy"; }
[ "$(lb_up "$lb")" -eq $REPLICAS ] || { $DOCKER logs "$lb" 2>&1 | tail -20; fail "HAProxy does not see $REPLICAS replicas UP"; }
[ "$(lb_grpc_up "$lb")" -eq $REPLICAS ] || { $DOCKER logs "$lb" 2>&1 | tail -20; fail "HAProxy does not see $REPLICAS gRPC replicas UP"; }
pass "$REPLICAS replicas healthy and UP in HAProxy (HTTP and gRPC backends) after $(elapsed "$t0") s; LB on 127.0.0.1:$LB_PORT, gRPC on 127.0.0.1:$LB_GRPC_PORT"

node docker/smoke.mjs "http://127.0.0.1:$LB_PORT" || fail "requests through the load balancer"
pass "RMSNorm and LayerNorm answers checked through the load balancer"
node docker/grpc-load.mjs "127.0.0.1:$LB_GRPC_PORT" 1 2 >"$WORK/grpc-smoke.json" || { cat "$WORK/grpc-smoke.json"; $DOCKER logs "$lb" 2>&1 | tail -20; fail "gRPC through the load balancer"; }
pass "gRPC through HAProxy: unary and stream answers checked ($(cat "$WORK/grpc-smoke.json"))"

victim=${apps[1]}
victim_name=$($DOCKER inspect -f '{{.Name}}' "$victim" | tr -d /)
restarts_before=$($DOCKER inspect -f '{{.RestartCount}}' "$victim")
hog_start compose
echo "load: autocannon, $LOAD_CONNECTIONS connections, and gRPC, $GRPC_WORKERS unary and stream workers, ${LOAD_SECONDS} s; SIGKILL $victim_name after ${KILL_AFTER} s"
node docker/load.mjs "http://127.0.0.1:$LB_PORT" "$LOAD_SECONDS" "$LOAD_CONNECTIONS" >"$WORK/load.json" 2>"$WORK/load.err" &
load_pid=$!
node docker/grpc-load.mjs "127.0.0.1:$LB_GRPC_PORT" "$LOAD_SECONDS" "$GRPC_WORKERS" >"$WORK/grpc-load.json" 2>"$WORK/grpc-load.err" &
grpc_load_pid=$!
t_load=$(date +%s.%N)
sleep 1 # past load.mjs's checks of the expected answers, into autocannon's load
hog_sample
# the kill still comes KILL_AFTER s into the load, however long the sample took
sleep "$(awk -v e="$(elapsed "$t_load")" -v k="$KILL_AFTER" 'BEGIN { s = k - e; print (s > 0 ? s : 0) }')"
victim_pid=$($DOCKER inspect -f '{{.State.Pid}}' "$victim")
kill -9 "$victim_pid"
t_kill=$(date +%s.%N)
echo "killed $victim_name: host PID $victim_pid (tini), SIGKILL"

t_running="" t_healthy="" t_lb="" lb_down_seen=""
for _ in $(seq 1 300); do
  if [ -z "$t_running" ] && [ "$($DOCKER inspect -f '{{.RestartCount}} {{.State.Running}}' "$victim")" = "$((restarts_before + 1)) true" ]; then
    t_running=$(elapsed "$t_kill")
  fi
  if [ -n "$t_running" ] && [ -z "$t_healthy" ] && [ "$($DOCKER inspect -f '{{.State.Health.Status}}' "$victim")" = healthy ]; then
    t_healthy=$(elapsed "$t_kill")
  fi
  # out of HAProxy's rotation, then back in: its own /readyz checks, independent of
  # Docker's HEALTHCHECK, decide when it gets traffic again
  up=$(lb_up "$lb")
  [ "$up" -lt $REPLICAS ] && lb_down_seen=1
  if [ -n "$lb_down_seen" ] && [ -z "$t_lb" ] && [ "$up" -eq $REPLICAS ]; then t_lb=$(elapsed "$t_kill"); fi
  [ -n "$t_lb" ] && [ -n "$t_healthy" ] && break
  sleep 0.2
done

if ! wait "$load_pid"; then load_rc=1; else load_rc=0; fi
load_pid=""
if ! wait "$grpc_load_pid"; then grpc_rc=1; else grpc_rc=0; fi
grpc_load_pid=""
hog_stop
cat "$WORK/grpc-load.err" >&2
grpc_load_check "replica SIGKILLed under load" "$WORK/grpc-load.json" "$grpc_rc"
cat "$WORK/load.err" >&2
figures=$(cat "$WORK/load.json")
echo "load figures: $figures"
# with dontlog-normal HAProxy logs only requests that hit an error or were retried
$DOCKER logs "$lb" 2>&1 | grep 'POST /v1/' >"$WORK/lb.log" || true
# gRPC calls HAProxy logged (errors only, as above): those that met the dead replica
grpc_met=$($DOCKER logs "$lb" 2>&1 | grep -c 'inference.GRPCInferenceService/' || true)
echo "HAProxy logged $grpc_met gRPC calls that met an error (the client's retry policy and resends made them good), e.g.:"
$DOCKER logs "$lb" 2>&1 | grep 'inference.GRPCInferenceService/' | head -2 | cut -c1-220 | sed 's/^/  /'
echo "HAProxy logged $(wc -l <"$WORK/lb.log") requests that met the dead replica (errors and retries only), e.g.:"
head -3 "$WORK/lb.log" | cut -c1-220 | sed 's/^/  /'
[ "$load_rc" -eq 0 ] || fail "failed requests during the replica kill: $figures"
[ -n "$t_running" ] || fail "the killed replica was not restarted"
[ -n "$t_healthy" ] || fail "the killed replica did not become healthy again"
[ -n "$t_lb" ] || fail "HAProxy did not put the killed replica back in rotation"
summary=$(node -e "const f=JSON.parse(process.argv[1]);console.log(f.sent+' sent, '+f.answered+' answered ('+f.correct+' 200 with the right body), '+f.non2xx+' non-2xx, '+f.failed+' failed in '+f.seconds+' s; '+f.rps+' req/s, p99 '+f.latencyP99ms+' ms, max '+f.latencyMaxMs+' ms')" "$figures")
pass "replica SIGKILLed under load: $summary; $grpc_summary, $grpc_met gRPC calls logged by HAProxy with an error; $hog_figures"
pass "killed replica restarted after ${t_running} s, back in HAProxy rotation after ${t_lb} s, Docker healthy after ${t_healthy} s"
step_done

# ---- 4. swarm: the stack under operations ---------------------------------------------
swarm_test
