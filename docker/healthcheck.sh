#!/bin/bash
# docker/healthcheck.sh PATH - the image's health check: exit 0 when GET PATH (default /healthz)
# on the service's own port answers 200. Bash's /dev/tcp, not `node -e fetch(...)`: a node
# process costs ~50 ms of CPU to start, and on a busy host inside a 1-CPU quota it outlasted
# Docker's check timeout, so swarm killed replicas that were only busy (all four at once in a
# test run). This costs a few ms.
exec 3<>"/dev/tcp/127.0.0.1/${PORT:-8080}" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "${1:-/healthz}" >&3
read -r status <&3 || exit 1
[[ $status =~ ^HTTP/1\.[01]\ 200\  ]]
