// Package ociimage builds olm-cmp's container image without Docker: an OCI
// image layout holding one image index (linux/amd64 and linux/arm64), each
// image one layer the build assembles itself (the base the Dockerfile gets
// from distroless/static: CA certificates, passwd and group entries, /tmp;
// then what the Dockerfile copies: the static binaries olm-cmp and
// olm-cmp-check, and plugin.yaml), and a CycloneDX SBOM of the binaries' Go
// modules attached as an OCI referrer of the index. Everything is written with go-containerregistry; the inputs
// are the module proxy (through `go build`) and Debian's ca-certificates.
//
// Two builds of one commit give the same digests: tar entries are sorted,
// owned by 0:0 (the Dockerfile's COPY) with fixed modes and SOURCE_DATE_EPOCH
// times; binaries are built with -trimpath and an empty build ID; configs
// and the SBOM carry the same time; gzip's header has no time.
package ociimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed layout, as the Dockerfile's final stage has it.
const (
	BinaryPath = "/usr/local/bin/olm-cmp"
	// CheckBinaryPath is olm-cmp-check, which olm-cmp runs from beside
	// itself for the checks too heavy to link into it (internal/checkproc).
	CheckBinaryPath = "/usr/local/bin/olm-cmp-check"
	PluginYAMLPath  = "/home/argocd/cmp-server/config/plugin.yaml"
	CACertsPath     = "/etc/ssl/certs/ca-certificates.crt"
	User            = "999:999"
	// DefaultCACerts is Debian's bundle, written by update-ca-certificates
	// from the ca-certificates package (the one distroless/static ships).
	DefaultCACerts = "/etc/ssl/certs/ca-certificates.crt"
	// RefNameAnnotation names the index in the layout's index.json.
	RefNameAnnotation = "org.opencontainers.image.ref.name"
	// SBOMArtifactType is the referrer's artifact type (its config media type).
	SBOMArtifactType = "application/vnd.cyclonedx+json"
)

// Config is the image config the Dockerfile gives (USER, ENV, ENTRYPOINT,
// CMD), plus what its distroless base sets (PATH, SSL_CERT_FILE).
func Config() v1.Config {
	return v1.Config{
		User: User,
		Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=" + CACertsPath,
			"HOME=/tmp",
		},
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"serve"},
		WorkingDir: "/",
	}
}

// BaseProvided are the paths the Dockerfile's base image (distroless/static)
// provides and this build assembles in its place.
var BaseProvided = []string{"/etc/group", "/etc/passwd", CACertsPath, "/tmp"}

// Options of a build.
type Options struct {
	// Repo is the module's root directory (go.mod, plugin.yaml).
	Repo string
	// Platforms, as os/arch; default linux/amd64 and linux/arm64.
	Platforms []string
	// Version is stamped into the binary (main.version) and names the index.
	Version string
	// Epoch is every timestamp of the image (SOURCE_DATE_EPOCH).
	Epoch time.Time
	// CACerts is the PEM bundle installed at CACertsPath.
	CACerts string
	// Go is the go command (default "go").
	Go string
	// SBOMFile, if set, receives the SBOM too (for cosign attest).
	SBOMFile string
}

// Result names what a build wrote.
type Result struct {
	Index v1.Hash            // the image index
	SBOM  v1.Hash            // the SBOM referrer's manifest
	Size  map[string]int64   // platform -> compressed layer + config + manifest bytes
	Image map[string]v1.Hash // platform -> image manifest digest
}

// Build writes the image layout to dir (replacing it).
func Build(dir string, o Options) (*Result, error) {
	if len(o.Platforms) == 0 {
		o.Platforms = []string{"linux/amd64", "linux/arm64"}
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.CACerts == "" {
		o.CACerts = DefaultCACerts
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w (install Debian's ca-certificates package)", err)
	}
	plugin, err := os.ReadFile(filepath.Join(o.Repo, "plugin.yaml"))
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "ociimage")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	res := &Result{Size: map[string]int64{}, Image: map[string]v1.Hash{}}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var infos []*buildinfo.BuildInfo
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q: give os/arch, e.g. linux/arm64", p)
		}
		binDir := filepath.Join(work, goos+"-"+goarch)
		if err := goBuild(o, goos, goarch, binDir); err != nil {
			return nil, err
		}
		bins := map[string][]byte{}
		for _, dst := range Binaries {
			data, err := os.ReadFile(filepath.Join(binDir, path.Base(dst)))
			if err != nil {
				return nil, err
			}
			bi, err := buildinfo.Read(bytes.NewReader(data))
			if err != nil {
				return nil, fmt.Errorf("%s %s: build info: %w", p, dst, err)
			}
			infos = append(infos, bi)
			bins[dst] = data
		}
		img, err := image(o, goos, goarch, rootFS(certs, plugin, bins))
		if err != nil {
			return nil, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		res.Image[p] = d
		res.Size[p], err = imageSize(img)
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: goarch}},
		})
	}
	if res.Index, err = idx.Digest(); err != nil {
		return nil, err
	}
	sbomJSON, err := SBOM(o.Version, o.Epoch, infos)
	if err != nil {
		return nil, err
	}
	if o.SBOMFile != "" {
		if err := os.WriteFile(o.SBOMFile, sbomJSON, 0o644); err != nil {
			return nil, err
		}
	}
	sbom, err := sbomReferrer(idx, sbomJSON, o.Epoch)
	if err != nil {
		return nil, err
	}
	if res.SBOM, err = sbom.Digest(); err != nil {
		return nil, err
	}

	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{RefNameAnnotation: o.Version})); err != nil {
		return nil, err
	}
	if err := lp.AppendImage(sbom); err != nil {
		return nil, err
	}
	return res, nil
}

// Binaries are the image's executables, each built from ./cmd/ and its
// file name: olm-cmp, and olm-cmp-check beside it.
var Binaries = []string{BinaryPath, CheckBinaryPath}

// goBuild builds the static binaries into dir as the Dockerfile does (one
// go build of both), plus what makes them reproducible: no build ID, the
// version from Options.
func goBuild(o Options, goos, goarch, dir string) error {
	args := []string{"build", "-trimpath", "-ldflags", "-s -w -buildid= -X main.version=" + o.Version, "-o", dir + string(filepath.Separator)}
	for _, b := range Binaries {
		args = append(args, "./cmd/"+path.Base(b))
	}
	cmd := exec.Command(o.Go, args...)
	cmd.Dir = o.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-buildvcs=true")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s/%s: %v\n%s", goos, goarch, err, b)
	}
	return nil
}

// entry is one file or directory of the root filesystem.
type entry struct {
	path string // absolute
	mode int64  // permission bits, plus sticky for /tmp
	dir  bool
	data []byte
}

// rootFS is the image's whole filesystem: the base (passwd, group, CA
// certificates, /tmp) and the Dockerfile's copies, with every parent
// directory, all owned by root.
func rootFS(certs, plugin []byte, bins map[string][]byte) []entry {
	files := []entry{
		{path: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nargocd:x:999:999:argocd:/home/argocd:/sbin/nologin\n")},
		{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nargocd:x:999:\n")},
		{path: CACertsPath, mode: 0o644, data: certs},
		{path: "/tmp", mode: 0o1777, dir: true},
		{path: PluginYAMLPath, mode: 0o644, data: plugin},
	}
	for _, b := range Binaries {
		files = append(files, entry{path: b, mode: 0o755, data: bins[b]})
	}
	seen := map[string]bool{}
	var out []entry
	for _, f := range files {
		for d := path.Dir(f.path); d != "/"; d = path.Dir(d) {
			if !seen[d] {
				seen[d] = true
				out = append(out, entry{path: d, mode: 0o755, dir: true})
			}
		}
		seen[f.path] = true
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// layerTar is the entries as one tar stream: sorted, root-owned, at epoch.
func layerTar(entries []entry, epoch time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    strings.TrimPrefix(e.path, "/"),
			Mode:    e.mode,
			ModTime: epoch,
			Format:  tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func image(o Options, goos, goarch string, entries []entry) (v1.Image, error) {
	data, err := layerTar(entries, o.Epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: o.Epoch},
			CreatedBy: "hack/ociimage: base files, " + strings.Join(Binaries, ", ") + ", " + PluginYAMLPath,
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = goos, goarch
	cf.Created = v1.Time{Time: o.Epoch}
	cf.Config = Config()
	return mutate.ConfigFile(img, cf)
}

func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n, err := img.Size()
	if err != nil {
		return 0, err
	}
	n += m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
