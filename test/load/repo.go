package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// bundleSource is a bundle directory the load pushes to the registry and,
// for the small ones, also keeps in the repository as a directory bundle.
type bundleSource struct {
	name, dir string
	inRepo    bool // also a directory bundle in the repository
	// digest is the image the tag scenarios resolve (warmed up before the
	// load); cold are the same files pushed again with other mtimes, which
	// the digest scenarios pin and the server first pulls during the load,
	// under registry faults.
	digest string
	cold   []string
}

// scenario is one distinct request: an application directory of the
// repository plus the plugin env and parameters an Application adds. Every
// request of a scenario must get the same answer.
type scenario struct {
	name         string
	app          string            // application directory, relative to the repository root
	env          map[string]string // ARGOCD_ENV_* entries
	params       []map[string]any  // ARGOCD_APP_PARAMETERS
	wantError    bool              // the reference render fails too
	usesRegistry bool
	cold         bool // left out of the warm-up: first pulled under faults
	weight       int
	reference    []string // canonical manifests of the reference render
	refError     string
}

// writeRepo lays out the repository Argo CD would send: bundles/<name> for
// the directory bundles and apps/<scenario app>/olm-cmp.yaml for every app,
// and returns the scenarios.
func writeRepo(repo, host string, bundles []*bundleSource) ([]*scenario, error) {
	var out []*scenario
	app := func(dir, spec string, extra map[string]string) error {
		d := filepath.Join(repo, "apps", dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: " + dir + "}\nspec:\n" + spec
		if err := os.WriteFile(filepath.Join(d, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
			return err
		}
		for name, body := range extra {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	add := func(s *scenario) { out = append(out, s) }
	for _, b := range bundles {
		if b.inRepo {
			if err := copyTree(b.dir, filepath.Join(repo, "bundles", b.name)); err != nil {
				return nil, err
			}
		}
		img := host + "/bundles/" + b.name
		// By tag: the tag is resolved against the registry on every request.
		if err := app(b.name+"-tag", fmt.Sprintf("  bundle: %s:v1\n  namespace: %s-system\n", img, b.name), nil); err != nil {
			return nil, err
		}
		add(&scenario{name: b.name + "-tag", app: "apps/" + b.name + "-tag", weight: 4, usesRegistry: true})
		// The same application with plugin env and parameters on top.
		add(&scenario{name: b.name + "-tag+params", app: "apps/" + b.name + "-tag", weight: 3, usesRegistry: true,
			env: map[string]string{"ARGOCD_ENV_KEEP_CRDS": "false"},
			params: []map[string]any{
				{"name": "namespace", "string": b.name + "-params"},
				{"name": "imagePullSecrets", "array": []string{"pull-a", "pull-b"}},
			}})
		// By digest, with more of the spec used.
		for i, d := range b.cold {
			name := fmt.Sprintf("%s-digest%d", b.name, i+1)
			spec := fmt.Sprintf("  bundle: %s@%s\n  namespace: %s-prod\n  createNamespace: false\n  imagePullSecrets: [pull-secret]\n  exclude: [ConsoleYAMLSample]\n  images: {\"quay.io/\": \"mirror.example.com/quay/\"}\n", img, d, name)
			if err := app(name, spec, nil); err != nil {
				return nil, err
			}
			add(&scenario{name: name, app: "apps/" + name, weight: 2, usesRegistry: true, cold: true})
		}
		if b.inRepo {
			if err := app(b.name+"-dir", fmt.Sprintf("  bundle: ../../bundles/%s\n  namespace: %s-dir\n", b.name, b.name), nil); err != nil {
				return nil, err
			}
			add(&scenario{name: b.name + "-dir", app: "apps/" + b.name + "-dir", weight: 3})
		}
	}
	// A directory bundle with an extra manifest and sync waves.
	extra := map[string]string{"extra-config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {greeting: hello}\n"}
	if err := app("tiny-extra", "  bundle: ../../bundles/tiny\n  namespace: tiny-extra\n  syncWaves: {crds: -10, crs: 5}\n", extra); err != nil {
		return nil, err
	}
	add(&scenario{name: "tiny-extra", app: "apps/tiny-extra", weight: 3})

	// Failures a user causes, about 5% of requests between them.
	if err := app("missing-tag", fmt.Sprintf("  bundle: %s/bundles/tiny:no-such-tag\n  namespace: missing\n", host), nil); err != nil {
		return nil, err
	}
	add(&scenario{name: "missing-tag", app: "apps/missing-tag", weight: 1, wantError: true, usesRegistry: true})
	if err := app("bad-namespace", "  bundle: ../../bundles/tiny\n  namespace: Bad_Namespace\n", nil); err != nil {
		return nil, err
	}
	add(&scenario{name: "bad-namespace", app: "apps/bad-namespace", weight: 1, wantError: true})
	add(&scenario{name: "unknown-parameter", app: "apps/tiny-dir", weight: 1, wantError: true,
		params: []map[string]any{{"name": "imagePullSecret", "array": []string{"x"}}}})
	return out, nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// tgzRepo packs the repository as Argo CD's repo-server does: gzip'd tar,
// paths relative to the root, directories as entries. Returns the bytes and
// their sha256 (the metadata message's checksum).
func tgzRepo(dir string) ([]byte, string, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), hex.EncodeToString(sum[:]), nil
}

// referenceRender runs `olm-cmp generate` once for the scenario, in its
// application directory with its plugin env and parameters (the classic
// mode, no server, no cache shared with the server), and keeps each manifest
// in canonical form, or the error.
func referenceRender(bin, repo string, s *scenario, baseEnv []string) error {
	cmd := exec.Command(bin, "generate", ".")
	cmd.Dir = filepath.Join(repo, s.app)
	cmd.Env = append(append([]string{}, baseEnv...), s.environ(nil)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if stdout.Len() > 0 {
			return fmt.Errorf("%s: generate failed but wrote to stdout: %v", s.name, err)
		}
		s.refError = strings.TrimSpace(stderr.String())
		if !s.wantError {
			return fmt.Errorf("%s: reference render failed: %s", s.name, s.refError)
		}
		return nil
	}
	if s.wantError {
		return fmt.Errorf("%s: reference render succeeded, the scenario expects an error", s.name)
	}
	docs := strings.Split(strings.TrimPrefix(stdout.String(), "---\n"), "\n---\n")
	s.reference = make([]string, len(docs))
	for i, d := range docs {
		c, err := canonical(d)
		if err != nil {
			return fmt.Errorf("%s: reference manifest %d: %v", s.name, i, err)
		}
		s.reference[i] = c
	}
	return nil
}

// environ is the scenario's plugin env and parameters as NAME=VALUE, plus
// extra (Argo CD's ARGOCD_APP_* identity variables).
func (s *scenario) environ(extra map[string]string) []string {
	var out []string
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	if s.params != nil {
		js, _ := json.Marshal(s.params)
		out = append(out, "ARGOCD_APP_PARAMETERS="+string(js))
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}
