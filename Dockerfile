# hedgesim as a container image, for running sharded studies on a cluster
# (README, "Running on a cluster"; deploy/kubernetes, deploy/slurm):
#
#   docker build -t hedgesim .
#   docker run --rm -v "$PWD/out:/out" hedgesim run tiny --out /out/tiny
#
# (the directory mounted must be writable by uid 65532).
#
# Two stages: the Go toolchain builds a static binary (no cgo), which the
# second stage puts alone in a distroless image that runs as a non-root
# user (uid 65532) with no shell. Charts need no system fonts (gonum/plot
# embeds its own). Every shard and the merge must run one image: the
# merge refuses partial results of another build.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a change to the code does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -buildvcs=auto records the VCS revision (hedgesim version prints it)
# when the context holds the clone's .git directory (not a worktree's
# .git file); -trimpath drops local paths from the binary.
RUN CGO_ENABLED=0 go build -buildvcs=auto -trimpath -ldflags="-s -w" -o /out/hedgesim ./cmd/hedgesim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hedgesim /usr/local/bin/hedgesim
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/hedgesim"]
CMD ["help"]
