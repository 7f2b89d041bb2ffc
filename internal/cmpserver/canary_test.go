package cmpserver

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/registry"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestCanaryCredentialNeverLeaks: the registry credential of the sidecar's
// docker config reaches no gRPC status, log line or metric, whatever the
// registry answers, including registries that echo the Authorization header
// or the password in their error pages.
func TestCanaryCredentialNeverLeaks(t *testing.T) {
	const user, password = "canary-user", "CANARY-SECRET-42"
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{User: user, Password: password})
	fr.PushDir(t, "tiny", "v1", "testdata/repo/bundles/tiny")
	cfg := filepath.Join(t.TempDir(), "config.json")
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, fr.Host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), RegistryConfig: cfg, Insecure: []string{fr.Host},
		Timeouts: registry.Timeouts{Dial: time.Second, TLSHandshake: time.Second, ResponseHeader: time.Second, ReadIdle: time.Second}}
	m := engine.NewMetrics()
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader, Metrics: m, MaxEntries: -1}), func(o *ServerOptions) { o.Metrics = m })
	repo := t.TempDir()
	app := filepath.Join(repo, "apps", "img")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, spec.FileName), fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: tiny}\nspec:\n  bundle: %s/tiny:v1\n  namespace: tiny-system\n", fr.Host), 0o644)
	tgz := tgzOf(t, repo)

	echo := bundletest.Fault{Status: 401, EchoAuthorization: true, Header: http.Header{"Www-Authenticate": {`Basic realm="x"`}}}
	var seen []string
	for _, f := range []bundletest.Fault{
		echo,
		{Status: 403, EchoAuthorization: true},
		{Status: 500, Body: "login failed for password=" + password + " user " + user + " auth " + auth},
		{Status: 404, EchoAuthorization: true},
		{Reset: true},
	} {
		fr.Clear()
		fr.Inject(bundletest.Where{Path: bundletest.TagPath("v1")}, f, -1)
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/img"})
		if err == nil {
			t.Fatalf("fault %+v: rendered", f)
		}
		seen = append(seen, status.Convert(err).Message())
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		seen = append(seen, f.String())
	}
	seen = append(seen, ts.logs.String())
	pair := []byte(user + ":" + password)
	for _, text := range seen {
		for _, secret := range []string{password, auth, base64.RawStdEncoding.EncodeToString(pair), base64.StdEncoding.EncodeToString([]byte(password))} {
			if strings.Contains(text, secret) {
				t.Errorf("the credential %q leaks in:\n%s", secret, text)
			}
		}
	}
}
