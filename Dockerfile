# A container that builds the example counter and serves it in serverless mode (docs/serverless.md).
#
#   docker build -t rivetkit-counter .
#   docker run -p 8080:8080 -e RIVET_ENDPOINT=http://engine:6420 rivetkit-counter
#
# Then point an engine's serverless pool at http://<this container>:8080/api/rivet. Unset
# RIVETKIT_RUNTIME_MODE=envoy for engine mode with a persistent envoy; without
# RIVET_ENDPOINT it serves local mode.

# Build: the same Debian 12 packages and CMake preset as `make build` (tools/install-deps.sh).
FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      g++-12 cmake ninja-build pkg-config \
      libboost1.81-dev libssl-dev libsqlite3-dev \
      libspdlog-dev libfmt-dev libcli11-dev libexpected-dev \
      libgtest-dev libgmock-dev libbenchmark-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake --preset release >/dev/null \
 && cmake --build build/release --target rivetkit_counter -j "$(nproc)"

# Run: only the shared libraries the binary links (ldd: SQLite, spdlog, fmt, libstdc++).
FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libsqlite3-0 libspdlog1.10 libfmt9 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /var/lib/rivetkit --create-home rivetkit
COPY --from=build /src/build/release/examples/counter/rivetkit_counter /usr/local/bin/rivetkit_counter
USER rivetkit
ENV RIVETKIT_RUNTIME_MODE=serverless \
    RIVETKIT_HOST=0.0.0.0 \
    RIVETKIT_PORT=8080 \
    RIVETKIT_DATA_DIR=/var/lib/rivetkit
EXPOSE 8080
# SIGTERM drains: new starts are refused, the engine is told, running actors stop (docs/serverless.md).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/rivetkit_counter"]
