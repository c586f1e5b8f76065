# Burrow as a container image: one binary on a scratch image, with only the shared libraries it needs (glibc),
# /etc/passwd with the non-root user burrow (uid 10001), /tmp, the CA bundle and the data directory /data as a volume.
# The root filesystem is assembled by scripts/image-rootfs.ts from a built dist/burrow (about 125 MB in all).
#
# Two ways to build it:
#
# 1. On a machine that can pull images, a normal multi-stage build: the build stage runs npm ci and
#    scripts/build.ts in node:20-bookworm (the Bun 1.4.5 runtime comes from npm, pinned in package-lock.json):
#        docker build -t burrow .
#        podman build --format docker -t burrow .        (the docker format keeps the HEALTHCHECK)
#
# 2. Offline, or to package a binary built already (no image is pulled, nothing is compiled in the build):
#        npm run build && npm run build:image -- [--engine docker|podman] [--tag burrow]
#    (scripts/build-image.ts), which assembles dist/image/ from dist/burrow in a temporary build context and runs
#    the build with --build-arg ROOTFS=prebuilt; by hand, from the repository:
#        bun run scripts/image-rootfs.ts dist/burrow dist/image
#        docker build --build-arg ROOTFS=prebuilt -t burrow .
#    The builder stage is then unused and skipped (BuildKit, and buildah/podman, skip unused stages).
#
# Run:   docker run -d -p 8080:8080 -v burrow-data:/data -e BURROW_ADMIN_EMAIL=... -e BURROW_ADMIN_PASSWORD=... burrow
# CLI:   docker exec <container> burrow keys       (any command; they use BURROW_DIR=/data)
# Rootful podman on a machine without systemd as PID 1 and without CAP_SYS_RESOURCE (as in tests/e2e/image.test.ts):
#        podman --runtime runc --cgroup-manager cgroupfs run --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 ...
#        and `podman healthcheck run <container>` (its health check timers need systemd).

ARG ROOTFS=build

# Builder: compiles dist/burrow for the builder's platform and assembles the image's files in /image.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json bunfig.toml ./
COPY scripts scripts
COPY sandbox sandbox
COPY static static
COPY src src
RUN node_modules/.bin/bun run scripts/build.ts \
 && node_modules/.bin/bun run scripts/image-rootfs.ts dist/burrow /image

# A root filesystem assembled outside (scripts/build-image.ts): --build-arg ROOTFS=prebuilt.
FROM scratch AS prebuilt
COPY dist/image/ /image/

FROM ${ROOTFS} AS rootfs

# The image: nothing but the root filesystem.
FROM scratch
COPY --from=rootfs /image/rootfs/ /
COPY --from=rootfs --chown=10001:10001 /image/data /data
ENV PATH=/usr/local/bin \
    BURROW_DIR=/data \
    BURROW_HTTP=0.0.0.0:8080
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8080
# A scratch image has no curl: the binary asks its own /_health (exit 0 on a 200).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/burrow", "health"]
# SIGTERM (docker stop) closes the listeners and the databases cleanly.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/burrow"]
CMD ["serve"]
