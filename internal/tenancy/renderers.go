package tenancy

import (
	"fmt"
	"sync"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// Renderers gives each request the renderer of the project asking, under
// the tenancy policy and cluster trust policy of the moment: for a project
// an entry covers, that entry's Gate (its own credentials, access proven
// per image), the cluster trust policy verified with those credentials, the
// entry's own trust policy on top, and the entry's admission; for an
// unlisted project under unlistedProjects: allow, what it rendered without
// tenancy (every image, the sidecar's credentials) through a gate of the
// sidecar's credentials, so that no project is served from the cache an
// image those credentials cannot read. Each entry's gate and verifiers are built once per
// policy version and shared by its projects' requests.
type Renderers struct {
	// Base is the sidecar's loader: its settings, its on-disk cache and,
	// for unlisted projects or entries granted sidecarCredentials, its
	// credentials.
	Base *bundle.ImageLoader
	// Policy is the tenancy policy as it is now (reloaded when its file
	// changes); an error fails every request until it is fixed.
	Policy func() (*Policy, error)
	// Trust is the cluster trust policy's verifier as it is now; nil
	// without one.
	Trust func() (*verify.Verifier, error)
	// VerifyOptions gives a verifier a loader's registry access.
	VerifyOptions func(*bundle.ImageLoader) verify.Options

	mu      sync.Mutex
	version string
	entries map[string]*entryState
}

// PolicyError is a request failing closed because the tenancy policy does
// not load (deleted, emptied, invalid since a reload): nothing the request
// or its author can fix, the cluster admin must. Transports report it as
// FailedPrecondition.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string {
	return fmt.Sprintf("olm-cmp renders nothing while its tenancy policy does not load: %s; fix: the cluster admin must restore the olm-cmp-tenancy ConfigMap (docs/tenancy.md)", e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// unlisted is the entry an unlisted project under unlistedProjects: allow
// renders with: the sidecar's credentials. Its name is no AppProject's.
var unlisted = &Project{Name: "(unlisted)", SidecarCredentials: true}

type entryState struct {
	gate            *Gate
	trustHash       string
	cluster, extra  *verify.Verifier
	clusterProvided bool
}

// For returns the renderer of project and its tenant, or the refusal (a
// *RefusalError) or the policy's load error.
func (rs *Renderers) For(project string) (*render.Renderer, *Tenant, error) {
	p, err := rs.Policy()
	if err != nil {
		return nil, nil, &PolicyError{Err: err}
	}
	var cluster *verify.Verifier
	if rs.Trust != nil {
		if cluster, err = rs.Trust(); err != nil {
			return nil, nil, err
		}
	}
	t, err := p.Tenant(project)
	if err != nil {
		return nil, nil, err
	}
	e := t.Entry
	if e == nil {
		// Today's behaviour (every image, the sidecar's credentials), but
		// through a gate all the same: an image another project's
		// credentials put in the cache is served only if the sidecar's
		// credentials read it too.
		e = unlisted
	}
	st := rs.entry(p, e, cluster)
	return &render.Renderer{Loader: st.gate.For(t), Verifier: st.cluster, ProjectVerifier: st.extra, Admit: t}, t, nil
}

// entry is e's state for policy p and cluster verifier cluster, built on
// first use and when either policy changed.
func (rs *Renderers) entry(p *Policy, e *Project, cluster *verify.Verifier) entryState {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.version != p.Hash() || rs.entries == nil {
		// A new policy version: every entry's gate is built anew (its
		// credentials file may be another), and no more than the policy's
		// entries are ever kept.
		rs.version, rs.entries = p.Hash(), map[string]*entryState{}
	}
	th := ""
	if cluster != nil {
		th = cluster.Policy().Hash()
	}
	st := rs.entries[e.Name]
	if st == nil {
		st = &entryState{gate: NewGate(p, e, rs.Base)}
		if e.Trust != nil {
			st.extra = verify.New(e.Trust, rs.options(st.gate.Loader))
		}
		rs.entries[e.Name] = st
	}
	if !st.clusterProvided || st.trustHash != th {
		st.cluster, st.trustHash, st.clusterProvided = nil, th, true
		if cluster != nil {
			st.cluster = verify.New(cluster.Policy(), rs.options(st.gate.Loader))
		}
	}
	return *st // a copy: another request may renew st's verifier
}

func (rs *Renderers) options(l *bundle.ImageLoader) verify.Options {
	if rs.VerifyOptions == nil {
		return verify.Options{}
	}
	return rs.VerifyOptions(l)
}

// ProjectLoader is, under the policy at path, the loader of project (its
// own credentials; base's for an unlisted project the policy allows) and
// its admission: `olm-cmp upgrade --project`, which pulls and lists tags
// without a render.Renderer.
func ProjectLoader(path, project string, base *bundle.ImageLoader) (*bundle.ImageLoader, render.Admission, error) {
	p, err := Load(path)
	if err != nil {
		return nil, nil, err
	}
	t, err := p.Tenant(project)
	if err != nil {
		return nil, nil, err
	}
	if t.Entry == nil {
		return base, t, nil
	}
	return NewGate(p, t.Entry, base).Loader, t, nil
}
