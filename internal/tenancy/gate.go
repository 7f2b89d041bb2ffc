package tenancy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// AccessTTL is how long a project's proven read access to an image (by
// digest) is trusted before its credentials are asked again: long enough
// that an Argo CD refresh storm costs one request per image, short enough
// that revoked credentials stop working within a minute.
const AccessTTL = time.Minute

// maxAccessVerdicts bounds a gate's remembered verdicts.
const maxAccessVerdicts = 4096

// Gate is the loader of one policy entry: the sidecar's loader settings
// with the entry's own credentials (bundle.ImageLoader.WithKeychain), and
// the proof, with those credentials, that its project may read each image
// it hands out. The on-disk cache is shared by digest with every other
// entry, so an image another project's pull put there is served only
// after a manifest HEAD with this entry's credentials answered (the
// verdict kept for AccessTTL; a refusal is never kept). A tag resolved with
// its credentials is the same proof.
type Gate struct {
	Loader *bundle.ImageLoader
	// creds names the credentials in refusals.
	creds string

	mu      sync.Mutex
	granted map[string]time.Time // image@digest → until
	now     func() time.Time
}

// NewGate is the gate of entry e of p over base, the sidecar's loader.
func NewGate(p *Policy, e *Project, base *bundle.ImageLoader) *Gate {
	creds := "the sidecar's registry credentials"
	switch {
	case e.SidecarCredentials:
	case e.RegistryConfig == "":
		creds = "no registry credentials (the entry names no registryConfig)"
	default:
		creds = fmt.Sprintf("its registryConfig %q", e.RegistryConfig)
	}
	return &Gate{Loader: base.WithKeychain(p.Keychain(e)), creds: creds, granted: map[string]time.Time{}, now: time.Now}
}

// For is the gate as the loader of tenant t's render (render.Loader and
// catalog.Puller): refusals name t's project and entry.
func (g *Gate) For(t *Tenant) *TenantLoader { return &TenantLoader{g: g, t: t} }

// TenantLoader is a Gate serving one project's render.
type TenantLoader struct {
	g *Gate
	t *Tenant
}

// Resolve pins ref with the project's credentials: a tag by asking the
// registry (access proven), a digest by a manifest HEAD unless one
// answered within AccessTTL.
func (l *TenantLoader) Resolve(ctx context.Context, ref string) (bundle.Origin, error) {
	o, err := l.g.Loader.Resolve(ctx, ref)
	if err != nil {
		return o, l.refusal(o.Image, ref, err)
	}
	if !strings.Contains(ref, "@") {
		l.g.grant(o.Image) // the registry resolved the tag for these credentials
		return o, nil
	}
	if err := l.check(ctx, o.Image, ref); err != nil {
		return bundle.Origin{}, err
	}
	return o, nil
}

// Load loads a resolved bundle; an image only once access to it is proven
// (Resolve proved it unless it was pinned elsewhere).
func (l *TenantLoader) Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error) {
	if o.Image != "" {
		if err := l.check(ctx, o.Image, o.Ref); err != nil {
			return nil, err
		}
	}
	return l.g.Loader.Load(ctx, o)
}

// LoadCatalog opens a catalog image with the project's credentials,
// proving access first when it is named by digest.
func (l *TenantLoader) LoadCatalog(ctx context.Context, ref string) (fs.FS, bundle.Origin, error) {
	if strings.Contains(ref, "@") {
		if err := l.check(ctx, ref, ref); err != nil {
			return nil, bundle.Origin{}, err
		}
	}
	fsys, o, err := l.g.Loader.LoadCatalog(ctx, ref)
	if err != nil {
		return nil, o, l.refusal(o.Image, ref, err)
	}
	l.g.grant(o.Image)
	return fsys, o, nil
}

// check proves the project may read image (a digest reference), asking the
// registry unless a verdict within AccessTTL says so.
func (l *TenantLoader) check(ctx context.Context, image, asked string) error {
	g := l.g
	if g.valid(image) {
		return nil
	}
	r, err := g.Loader.Registry().Parse(image)
	if err != nil {
		return err
	}
	d, ok := r.(name.Digest)
	if !ok {
		return fmt.Errorf("image %s is not pinned by digest", image)
	}
	if err := g.Loader.Registry().Head(ctx, d); err != nil {
		return l.refusal(image, asked, err)
	}
	g.grant(image)
	return nil
}

// refusal turns a registry's 401 or 403 answer to the project's
// credentials into the tenancy refusal; other errors pass as they are.
func (l *TenantLoader) refusal(image, asked string, err error) error {
	re := registry.AsError(err)
	if re == nil || re.Reason != registry.ReasonStatus || re.Status != 401 && re.Status != 403 {
		return err
	}
	if image == "" {
		image = asked
	}
	t := l.t
	entry := fmt.Sprintf("tenancy policy %s, unlistedProjects: allow", filepath.Base(t.Policy.Name))
	fix := fmt.Sprintf("add credentials for %s to the sidecar's registry config, or ask the cluster admin for an entry for this project with its own", re.Host)
	if t.Entry != nil && t.Entry.RegistryConfig != "" {
		if _, err := ReadCredentials(t.Policy.CredentialsDir, t.Entry.RegistryConfig); errors.Is(err, fs.ErrNotExist) {
			// The usual cause of a 401 for a new project: its key is not in
			// the credentials Secret, so it pulled anonymously.
			return &RefusalError{Project: t.Project,
				Problem: fmt.Sprintf("cannot read image %s: its registryConfig %q (%s) is missing from credentialsDir, so the pull had no credentials and the registry %s answered %d", shortImage(image), t.Entry.RegistryConfig, t.describe(), re.Host, re.Status),
				Fix:     fmt.Sprintf("ask the cluster admin to add the key %s with credentials for %s to the credentials Secret mounted at credentialsDir (olm-cmp-tenant-registry), or to correct that entry's registryConfig", t.Entry.RegistryConfig, re.Host)}
		}
	}
	if t.Entry != nil {
		entry = t.describe()
		fix = fmt.Sprintf("add credentials for %s to that entry's registryConfig, or use an image the project's credentials can read", re.Host)
		if t.Entry.SidecarCredentials {
			fix = fmt.Sprintf("add credentials for %s to the sidecar's registry config, or give the entry a registryConfig of its own", re.Host)
		}
	}
	return &RefusalError{Project: t.Project,
		Problem: fmt.Sprintf("cannot read image %s with %s (%s): the registry %s answered %d", shortImage(image), l.g.creds, entry, re.Host, re.Status),
		Fix:     fix}
}

func shortImage(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func (g *Gate) valid(image string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	until, ok := g.granted[image]
	return ok && g.now().Before(until)
}

// grant remembers that the entry's credentials read image (a digest
// reference). Only successes are kept.
func (g *Gate) grant(image string) {
	if image == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if len(g.granted) >= maxAccessVerdicts {
		for k, until := range g.granted {
			if !now.Before(until) {
				delete(g.granted, k)
			}
		}
		if len(g.granted) >= maxAccessVerdicts {
			clear(g.granted)
		}
	}
	g.granted[image] = now.Add(AccessTTL)
}
