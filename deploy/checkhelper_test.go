package deploy_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
	"github.com/olm-cmp/olm-cmp/hack/sidecar"
	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
)

// TestImageCheckHelper: the image's olm-cmp-check, which olm-cmp runs from
// beside itself, is there as installed: root-owned, mode 0755 (so uid 999
// runs it), static (the base has no libc), and, run as the deployed
// container runs (hack/sidecar: the kustomize component's spec, its command
// replaced by the helper: read-only root, uid 999, no_new_privs, the image's
// env), answers an empty request with an empty answer.
func TestImageCheckHelper(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs the helper chrooted as uid 999 in a mount namespace, as its image runs: needs root")
	}
	img := ociImage(t)
	hs, _ := layerEntries(t, img)
	i := slices.IndexFunc(hs, func(h *tar.Header) bool { return "/"+h.Name == ociimage.CheckBinaryPath })
	if i < 0 {
		t.Fatalf("the image has no %s", ociimage.CheckBinaryPath)
	}
	if h := hs[i]; h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 {
		t.Errorf("%s: type %c, mode %o, owner %d:%d; want a regular file, 0755, 0:0", ociimage.CheckBinaryPath, h.Typeflag, h.Mode, h.Uid, h.Gid)
	}
	root := ociRoot(t)
	checkStatic(t, filepath.Join(root, ociimage.CheckBinaryPath))

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sidecar.FromKustomize(".", "argocd")
	if err != nil {
		t.Fatal(err)
	}
	s.Container["command"], s.Container["args"] = []any{ociimage.CheckBinaryPath}, []any{}
	p, err := sidecar.Prepare(s, sidecar.Options{Root: root, Volumes: t.TempDir(), Image: cf.Config})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = p.Env
	checkHelperAnswers(t, cmd)
}

// checkHelperAnswers runs cmd, an olm-cmp-check, on an empty request: it
// must answer its build (one line), and nothing else.
func checkHelperAnswers(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Stdin = strings.NewReader(`{"jobs":[]}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), `{"build":{"go":"go`) || strings.Count(string(out), "\n") != 1 || stderr.Len() != 0 {
		t.Errorf("%s answers an empty request with %q (%v), want its build; stderr:\n%s", cmd, out, err, stderr.String())
	}
}

// TestDeployedSidecarWithoutCheckHelper: an image that lacks olm-cmp-check
// (built without it) still starts, and a render then fails, as Argo CD
// shows it, with the one line that names the helper and how to install it,
// and no path of the sidecar's filesystem.
func TestDeployedSidecarWithoutCheckHelper(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs the sidecar chrooted as uid 999 in a mount namespace, as its image runs: needs root")
	}
	if !olmCmpRunsCheckHelper(t) {
		t.Skip("olm-cmp still links the API server's checks (cmd/olm-cmp imports k8s.io/apiextensions-apiserver's validation): it never runs olm-cmp-check yet")
	}
	cf, err := ociImage(t).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sidecar.FromKustomize(".", "argocd")
	if err != nil {
		t.Fatal(err)
	}
	root := ociRoot(t)
	if err := os.Remove(filepath.Join(root, ociimage.CheckBinaryPath)); err != nil {
		t.Fatal(err)
	}
	p, err := sidecar.Prepare(s, sidecar.Options{Root: root, Volumes: t.TempDir(), Image: cf.Config, HTTPAddr: freeLoopback(t)})
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	runSidecar(t, p, func(t *testing.T) {
		_, err := generateDemo(t, p, "default")
		if err == nil {
			t.Fatal("the demo rendered without olm-cmp-check in the image")
		}
		msg = status.Convert(err).Message()
	})
	t.Logf("Argo CD shows: %s", msg)
	if strings.Count(msg, "\n") > 0 || !strings.Contains(msg, checkproc.Executable+", which makes the checks") || !strings.Contains(msg, "install both") {
		t.Errorf("the render's error is not the one line naming %s and how to install it: %q", checkproc.Executable, msg)
	}
	for _, private := range []string{root, "/usr/local/bin", "/tmp/", "/var/cache"} {
		if strings.Contains(msg, private) {
			t.Errorf("the render's error shows the sidecar's path %s: %q", private, msg)
		}
	}
}

// olmCmpRunsCheckHelper: olm-cmp no longer links the API server's CRD
// validation, so a render meeting a new CRD runs olm-cmp-check.
func olmCmpRunsCheckHelper(t *testing.T) bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "../cmd/olm-cmp").Output()
	if err != nil {
		t.Fatalf("go list -deps ../cmd/olm-cmp: %v", err)
	}
	return !slices.Contains(strings.Fields(string(out)), "k8s.io/apiextensions-apiserver/pkg/apiserver/validation")
}

// generateDemo asks the sidecar's plugin socket for examples/demo's
// manifests as argocd-repo-server does: the repository (here ../examples) as
// a tarball streamed after its metadata, the env of an Application of
// project alongside.
func generateDemo(t *testing.T, p *sidecar.Pod, project string) ([]string, error) {
	t.Helper()
	socks, _ := filepath.Glob(filepath.Join(p.SocketDir(), "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("plugin sockets %v, want one", socks)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.AddFS(os.DirFS("../examples")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	repo := buf.Bytes()
	sum := sha256.Sum256(repo)

	conn, err := grpc.NewClient("unix://"+socks[0], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := pluginpb.NewConfigManagementPluginServiceClient(conn).GenerateManifest(ctx)
	if err != nil {
		return nil, err
	}
	var env []*pluginpb.EnvEntry
	for _, kv := range [][2]string{{"ARGOCD_APP_NAME", "greeter"}, {"ARGOCD_APP_NAMESPACE", "greeter-system"},
		{"ARGOCD_APP_PROJECT_NAME", project}, {"ARGOCD_APP_REVISION", strings.Repeat("0123456789", 4)},
		{"ARGOCD_APP_SOURCE_PATH", "demo"}, {"ARGOCD_APP_SOURCE_REPO_URL", "https://git.example.com/fleet.git"}, {"KUBE_VERSION", "1.33"}} {
		env = append(env, &pluginpb.EnvEntry{Name: kv[0], Value: kv[1]})
	}
	err = stream.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_Metadata{Metadata: &pluginpb.ManifestRequestMetadata{
		AppName: "greeter", AppRelPath: "demo", Checksum: hex.EncodeToString(sum[:]), Size: int64(len(repo)), Env: env}}})
	for b := repo; err == nil && len(b) > 0; {
		n := min(1024, len(b)) // Argo CD's default chunk size
		err = stream.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: b[:n]}}})
		b = b[n:]
	}
	resp, rerr := stream.CloseAndRecv()
	if rerr != nil {
		return nil, rerr
	}
	return resp.GetManifests(), err
}

// checkDemoRendered: the sidecar answered the demo's manifests: its CRD
// (checked by olm-cmp-check where olm-cmp no longer links the checks) and
// its operator's Deployment among them, for an Application of project.
func checkDemoRendered(t *testing.T, p *sidecar.Pod, project string) {
	t.Helper()
	ms, err := generateDemo(t, p, project)
	if err != nil {
		t.Fatalf("the sidecar did not render examples/demo: %v", err)
	}
	var kinds []string
	for _, m := range ms {
		var obj struct{ Kind string }
		if err := yaml.Unmarshal([]byte(m), &obj); err != nil {
			t.Fatalf("manifest %.100q: %v", m, err)
		}
		kinds = append(kinds, obj.Kind)
	}
	if !slices.Contains(kinds, "CustomResourceDefinition") || !slices.Contains(kinds, "Deployment") {
		t.Errorf("the demo's render holds the kinds %v: no CustomResourceDefinition or Deployment", kinds)
	}
}
