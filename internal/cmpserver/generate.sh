#!/usr/bin/env bash
# Regenerates the gRPC stubs of the Argo CD config-management-plugin protocol
# (internal/cmpserver/pluginpb/*.pb.go) from our own .proto files.
#
# Why our own stubs: importing Argo CD's Go package drags ~140 modules into the
# server binary. The wire format (field numbers, names, method paths) is what
# must match Argo CD, and TestDescriptorMatchesArgoCD checks it.
#
# Tools are pinned and installed per user, so `make generate` gives the same
# bytes on every machine:
#   - protoc-gen-go: the google.golang.org/protobuf version in go.mod (generated
#     code and runtime stay in lockstep);
#   - protoc-gen-go-grpc: PROTOC_GEN_GO_GRPC_VERSION below;
#   - protoc: Debian's protobuf-compiler (installed with apt-get when missing).
# TestGeneratedCodeIsFresh regenerates into a temp dir and diffs.
#
# Usage: internal/cmpserver/generate.sh [OUTDIR]   (default: the repository root)
set -euo pipefail

PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root}"
bin="${OLM_CMP_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/bin}"
mkdir -p "$bin" "$out"

cd "$root"
pb_version="$(go list -m -f '{{.Version}}' google.golang.org/protobuf)"

# install_tool NAME MODULE_PATH@VERSION: reinstall only when the pinned version changed.
install_tool() {
	local name="$1" pkg="$2" stamp="$bin/.$1.version"
	if [[ -x "$bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$pkg" ]]; then
		return
	fi
	echo "installing $pkg into $bin" >&2
	GOBIN="$bin" GOFLAGS=-mod=mod go install "$pkg"
	echo "$pkg" >"$stamp"
}
install_tool protoc-gen-go "google.golang.org/protobuf/cmd/protoc-gen-go@$pb_version"
install_tool protoc-gen-go-grpc "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"

if ! command -v protoc >/dev/null; then
	echo "protoc not found: installing Debian's protobuf-compiler" >&2
	apt-cache policy protobuf-compiler >&2 || true
	sudo_cmd=""
	if [[ "$(id -u)" != 0 ]]; then sudo_cmd="sudo"; fi
	$sudo_cmd apt-get update
	$sudo_cmd apt-get install -y protobuf-compiler
fi

# Paths are given relative to the repository root so the registered file names
# (internal/cmpserver/pluginpb/plugin.proto) cannot clash with another "plugin.proto"
# in the process-wide protobuf registry.
PATH="$bin:$PATH" protoc -I . \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	internal/cmpserver/pluginpb/repository.proto internal/cmpserver/pluginpb/plugin.proto
