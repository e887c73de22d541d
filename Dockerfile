# syntax=docker/dockerfile:1
# dubsim: a static binary (fixtures embedded) on an empty base image.
#
#   docker build -t dubsim/dubsim:latest --build-arg VERSION=$(git describe --always --dirty) .
#   docker run --rm -p 8080:8080 -v dubsim-data:/data dubsim/dubsim:latest
#
# The `bin` stage is the Go build by default. scripts/image builds the same
# binary on the host and passes --build-arg BIN_FROM=prebuilt, so the image
# can be built where pulling the Go image is not possible (only `scratch`
# is needed then).

ARG BIN_FROM=build
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Same flags as scripts/image: static (no cgo), trimmed, stripped, stamped.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /rootfs/dubsim ./cmd/dubsim \
 && install -d -m 1777 /rootfs/tmp \
 && install -d -m 0755 /rootfs/data

FROM scratch AS prebuilt
COPY dist/rootfs/ /rootfs/

FROM ${BIN_FROM} AS bin

FROM scratch
COPY --from=bin --chown=65532:65532 /rootfs/tmp /tmp
COPY --from=bin --chown=65532:65532 /rootfs/data /data
COPY --from=bin /rootfs/dubsim /dubsim
# Non-root (the distroless "nonroot" ids); the data file and uploaded blobs
# live in the /data volume; /tmp (theirs too) holds large idempotent bodies.
USER 65532:65532
ENV DUBSIM_ADDR=:8080 \
    DUBSIM_DATA=/data/dubsim.db \
    TMPDIR=/tmp
VOLUME ["/data"]
# 8080: both interfaces and /_sim; 8081: the optional studio-only address
# (--studio-addr :8081 or DUBSIM_STUDIO_ADDR=:8081).
EXPOSE 8080 8081
# No shell or curl in the image: the binary checks itself (GET /_sim/health
# on the port of DUBSIM_ADDR).
HEALTHCHECK --interval=10s --timeout=3s --start-period=1s --retries=3 CMD ["/dubsim", "healthcheck", "--quiet"]
ENTRYPOINT ["/dubsim"]
