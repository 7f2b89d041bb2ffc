// The only file that imports Argo CD. test/argocd-v3/argocd_adapter_test.go is
// generated from it: edit this one, then run `go generate` in test/argocd-v3.

package cmptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/argoproj/argo-cd/v2/cmpserver"
	pluginclient "github.com/argoproj/argo-cd/v2/cmpserver/apiclient"
	"github.com/argoproj/argo-cd/v2/cmpserver/plugin"
	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v2/reposerver/repository"
	"github.com/argoproj/argo-cd/v2/util/app/discovery"
	"github.com/argoproj/argo-cd/v2/util/cmp"
	"github.com/argoproj/argo-cd/v2/util/git"
	utilio "github.com/argoproj/argo-cd/v2/util/io"
	grpc_retry "github.com/grpc-ecosystem/go-grpc-middleware/retry"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"k8s.io/apimachinery/pkg/api/resource"
)

// argoCDModule names the Argo CD module these tests drive (in test names and logs).
const argoCDModule = "github.com/argoproj/argo-cd/v2"

const (
	testRepoURL  = "https://git.example.com/org/deploy.git"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
)

func argoPlugin(p *Plugin) *v1alpha1.ApplicationSourcePlugin {
	if p == nil {
		return nil
	}
	out := &v1alpha1.ApplicationSourcePlugin{Name: p.Name}
	for _, e := range p.Env {
		out.Env = append(out.Env, &v1alpha1.EnvEntry{Name: e[0], Value: e[1]})
	}
	for _, prm := range p.Params {
		ap := v1alpha1.ApplicationSourcePluginParameter{Name: prm.Name, String_: prm.String}
		if prm.Array != nil {
			ap.OptionalArray = &v1alpha1.OptionalArray{Array: prm.Array}
		}
		if prm.Map != nil {
			ap.OptionalMap = &v1alpha1.OptionalMap{Map: prm.Map}
		}
		out.Parameters = append(out.Parameters, ap)
	}
	return out
}

// argoGenerate runs the repo-server's own manifest generation
// (reposerver/repository.GenerateManifests) for an app of a checked-out repo.
// The plugin socket dir is taken from $ARGOCD_PLUGINSOCKFILEPATH, as in the
// repo-server. It returns the manifests (JSON, one object each) and the
// source type the repo-server settled on.
func argoGenerate(ctx context.Context, r GenRequest) ([]string, string, error) {
	q := &apiclient.ManifestRequest{
		Repo:        &v1alpha1.Repository{Repo: testRepoURL},
		Revision:    testRevision,
		AppName:     r.AppName,
		Namespace:   "argocd",
		KubeVersion: "1.31.0",
		ApplicationSource: &v1alpha1.ApplicationSource{
			RepoURL:        testRepoURL,
			Path:           r.AppPath,
			TargetRevision: "main",
			Plugin:         argoPlugin(r.Plugin),
		},
	}
	res, err := repository.GenerateManifests(ctx,
		filepath.Join(r.RepoRoot, r.AppPath), r.RepoRoot, testRevision, q,
		false, git.NoopCredsStore{}, resource.MustParse("100Mi"),
		utilio.NewRandomizedTempPaths(os.TempDir()))
	if err != nil {
		return nil, "", err
	}
	return res.Manifests, res.SourceType, nil
}

// argoAnnounce asks the plugin for its parameters the way the repo-server's
// GetAppDetails does for a plugin source: the same environment (app name,
// source repo/path/revision, ARGOCD_ENV_*, parameters), Argo CD's plugin
// discovery/dial, its tar stream, and Argo CD's generated types to decode.
func argoAnnounce(ctx context.Context, r GenRequest) ([]Announcement, error) {
	env := v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: r.AppName},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: testRepoURL},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: r.AppPath},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: "main"},
	}
	environ := env.Environ()
	name := ""
	if p := argoPlugin(r.Plugin); p != nil {
		name = p.Name
		for _, e := range p.Env {
			environ = append(environ, "ARGOCD_ENV_"+e.Name+"="+env.Envsubst(e.Value))
		}
		pe, err := p.Parameters.Environ()
		if err != nil {
			return nil, err
		}
		environ = append(environ, pe...)
	}
	appPath := filepath.Join(r.RepoRoot, r.AppPath)
	conn, client, err := discovery.DetectConfigManagementPlugin(ctx, appPath, r.RepoRoot, name, environ, nil)
	if err != nil {
		return nil, fmt.Errorf("detecting the plugin: %w", err)
	}
	defer conn.Close()
	stream, err := client.GetParametersAnnouncement(ctx, grpc_retry.Disable())
	if err != nil {
		return nil, err
	}
	if err := cmp.SendRepoStream(stream.Context(), appPath, r.RepoRoot, stream, environ, nil); err != nil {
		return nil, fmt.Errorf("sending the repository: %w", err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return nil, err
	}
	var out []Announcement
	for _, a := range resp.ParameterAnnouncements {
		out = append(out, fromArgoAnnouncement(a))
	}
	return out, nil
}

func fromArgoAnnouncement(a *apiclient.ParameterAnnouncement) Announcement {
	return Announcement{
		Name: a.Name, Title: a.Title, Tooltip: a.Tooltip, ItemType: a.ItemType,
		CollectionType: a.CollectionType, Required: a.Required,
		String: a.String_, Array: a.Array, Map: a.Map,
	}
}

// startClassic runs Argo CD's own argocd-cmp-server (cmpserver package,
// in-process) with <repo>/plugin.yaml, so every request forks
// `olm-cmp generate` from PATH. generateArgs are appended to the generate
// command (as a user would edit plugin.yaml, e.g. --insecure-registry for a
// plain-HTTP registry). It returns the socket dir.
func startClassic(t testing.TB, generateArgs ...string) string {
	t.Helper()
	requireBinary(t)
	cfg, err := plugin.ReadPluginConfig(repoRoot)
	if err != nil {
		t.Fatalf("Argo CD rejects %s/plugin.yaml: %v", repoRoot, err)
	}
	cfg.Spec.Generate.Args = append(cfg.Spec.Generate.Args, generateArgs...)
	srv, err := cmpserver.NewServer(plugin.CMPServerInitConstants{PluginConfig: *cfg})
	if err != nil {
		t.Fatal(err)
	}
	g, err := srv.CreateGRPC()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(shortTempDir(t), "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("unix", filepath.Join(dir, pluginCfg.socketName()))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return dir
}

// startFloor serves a plugin that does no work: it reads each request stream
// to the end and answers with the given manifests. Timing it through the same
// client path gives the repo-server side's own cost (dial, two tarballs,
// parsing the answer), the floor under any plugin. It returns the socket dir.
func startFloor(t testing.TB, manifests []string) string {
	t.Helper()
	dir := filepath.Join(shortTempDir(t), "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("unix", filepath.Join(dir, pluginCfg.socketName()))
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(pluginclient.MaxGRPCMessageSize), grpc.MaxSendMsgSize(pluginclient.MaxGRPCMessageSize))
	pluginclient.RegisterConfigManagementPluginServiceServer(g, &floorPlugin{manifests: manifests})
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return dir
}

type floorPlugin struct {
	pluginclient.UnimplementedConfigManagementPluginServiceServer
	manifests []string
}

func drain(recv func() (*pluginclient.AppStreamRequest, error)) error {
	for {
		if _, err := recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func (f *floorPlugin) CheckPluginConfiguration(context.Context, *emptypb.Empty) (*pluginclient.CheckPluginConfigurationResponse, error) {
	return &pluginclient.CheckPluginConfigurationResponse{IsDiscoveryConfigured: true}, nil
}

func (f *floorPlugin) MatchRepository(s pluginclient.ConfigManagementPluginService_MatchRepositoryServer) error {
	if err := drain(s.Recv); err != nil {
		return err
	}
	return s.SendAndClose(&pluginclient.RepositoryResponse{IsSupported: true, IsDiscoveryEnabled: true})
}

func (f *floorPlugin) GenerateManifest(s pluginclient.ConfigManagementPluginService_GenerateManifestServer) error {
	if err := drain(s.Recv); err != nil {
		return err
	}
	return s.SendAndClose(&pluginclient.ManifestResponse{Manifests: f.manifests, SourceType: "Plugin"})
}
