# procmesh container image.
#   docker build -t procmesh:0.1.0 .
#   docker run --rm -p 8080:8080 procmesh:0.1.0
# Every setting is a PROCMESH_* environment variable (`procmesh --help`
# lists them); docs/deploy.md shows the compose and Kubernetes set-ups.

# ---- build: Debian 12 with the -dev packages ---------------------------
FROM debian:12 AS build
# scripts/deps.sh is the one list of build packages (the same script
# `make deps` uses), so the image cannot drift from a local build.
COPY scripts/deps.sh /tmp/deps.sh
RUN /tmp/deps.sh build && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake cmake
COPY core core
COPY api api
COPY service service
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build -j"$(nproc)" --target procmesh \
 && strip build/procmesh \
 && ./build/procmesh --help >/dev/null

# ---- run: slim image, runtime libraries only, non-root -----------------
FROM debian:12-slim
# The shared libraries of the -dev packages above (tests/deploy checks
# that this list covers every library the binary links, and libmicrohttpd,
# which the server opens; libcglm0 only for -O0 builds, which call cglm
# out of line), and curl for HEALTHCHECK.
# jansson, xxhash, libpng, libuuid, hiredis, zlib and brotli are linked
# from their static archives (PM_STATIC_DEPS, docs/svc.md): none needed.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12 libcglm0 libmeshoptimizer2d curl \
 && rm -rf /var/lib/apt/lists/*
# A fixed numeric UID/GID so Kubernetes' runAsNonRoot can verify it.
RUN groupadd --system --gid 10001 procmesh \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin procmesh
COPY --from=build /src/build/procmesh /usr/local/bin/procmesh
# Fail the build, not the first request, if a runtime library is missing:
# the linked ones, and libmicrohttpd, which the server opens when it starts
# (service/mhd.h; its name is marked in the binary).
RUN ! ldd /usr/local/bin/procmesh | grep -q "not found" \
 && for lib in $(grep -ao 'PM_DLOPEN:[A-Za-z0-9._+-]*' /usr/local/bin/procmesh | cut -d: -f2); do \
      ldconfig -p | grep -q "$lib " || { echo "missing $lib"; exit 1; }; done \
 && procmesh --version

ENV PROCMESH_BIND=0.0.0.0 \
    PROCMESH_PORT=8080 \
    PROCMESH_LOG_LEVEL=info
USER 10001:10001
EXPOSE 8080
# Liveness only: /healthz answers while the process serves HTTP; a missing
# Redis does not make a container unhealthy (it is only degraded).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${PROCMESH_PORT}/healthz" || exit 1
# SIGTERM starts the drain (PROCMESH_DRAIN_MS); give `docker stop -t` more.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/procmesh"]
