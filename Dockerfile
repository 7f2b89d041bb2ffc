# olm-cmp image: static binaries on distroless/static, run as uid 999 (Argo CD's user, so the
# plugin socket in the shared `plugins` volume is usable by argocd-repo-server).
#   make image-docker IMAGE=registry.example.com/olm-cmp:dev   (docker build -t IMAGE --build-arg VERSION=... .)
# Without Docker, `make image` builds the same image as an OCI layout (hack/ociimage); deploy/image_test.go
# holds the two equal (files, user, env, entrypoint, command), so change both together.
# The build step below is also run verbatim by deploy/dockerfile_test.go (static-binary check).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# olm-cmp and olm-cmp-check, the checks too heavy to link into every olm-cmp process, which olm-cmp
# runs from beside itself (internal/checkproc)
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/ ./cmd/olm-cmp ./cmd/olm-cmp-check

# distroless "nonroot" is uid 65532; Argo CD's repo-server and stock sidecars run as 999.
FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/olm-cmp /usr/local/bin/olm-cmp
COPY --from=build /out/olm-cmp-check /usr/local/bin/olm-cmp-check
# classic mode: argocd-cmp-server reads this and runs `olm-cmp generate`; native mode
# (`olm-cmp serve`) reads it for the plugin name and version.
COPY plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
USER 999:999
ENV HOME=/tmp
# Kubernetes args replace CMD: the deployments give `serve` and its flags.
ENTRYPOINT ["/usr/local/bin/olm-cmp"]
CMD ["serve"]
