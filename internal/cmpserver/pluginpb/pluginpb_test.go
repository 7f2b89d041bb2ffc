package pluginpb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"
)

// field is what Argo CD's protos say about one message field.
type field struct {
	number   protoreflect.FieldNumber
	kind     protoreflect.Kind
	repeated bool
	message  protoreflect.FullName // for message fields
}

// argoCD is the wire contract, from argoproj/argo-cd cmpserver/plugin/plugin.proto
// and reposerver/repository/repository.proto (identical in v2.14 and v3.x).
var argoCD = map[protoreflect.FullName]map[protoreflect.Name]field{
	"plugin.AppStreamRequest": {
		"metadata": {1, protoreflect.MessageKind, false, "plugin.ManifestRequestMetadata"},
		"file":     {2, protoreflect.MessageKind, false, "plugin.File"},
	},
	"plugin.ManifestRequestMetadata": {
		"appName":    {1, protoreflect.StringKind, false, ""},
		"appRelPath": {2, protoreflect.StringKind, false, ""},
		"checksum":   {3, protoreflect.StringKind, false, ""},
		"size":       {4, protoreflect.Int64Kind, false, ""},
		"env":        {5, protoreflect.MessageKind, true, "plugin.EnvEntry"},
	},
	"plugin.EnvEntry": {
		"name":  {1, protoreflect.StringKind, false, ""},
		"value": {2, protoreflect.StringKind, false, ""},
	},
	"plugin.ManifestResponse": {
		"manifests":  {1, protoreflect.StringKind, true, ""},
		"sourceType": {2, protoreflect.StringKind, false, ""},
	},
	"plugin.RepositoryResponse": {
		"isSupported":        {1, protoreflect.BoolKind, false, ""},
		"isDiscoveryEnabled": {2, protoreflect.BoolKind, false, ""},
	},
	"plugin.ParametersAnnouncementResponse": {
		"parameterAnnouncements": {1, protoreflect.MessageKind, true, "repository.ParameterAnnouncement"},
	},
	"plugin.File": {
		"chunk": {1, protoreflect.BytesKind, false, ""},
	},
	"plugin.CheckPluginConfigurationResponse": {
		"isDiscoveryConfigured": {1, protoreflect.BoolKind, false, ""},
		"provideGitCreds":       {2, protoreflect.BoolKind, false, ""},
	},
	"repository.ParameterAnnouncement": {
		"name":           {1, protoreflect.StringKind, false, ""},
		"title":          {2, protoreflect.StringKind, false, ""},
		"tooltip":        {3, protoreflect.StringKind, false, ""},
		"required":       {4, protoreflect.BoolKind, false, ""},
		"itemType":       {5, protoreflect.StringKind, false, ""},
		"collectionType": {6, protoreflect.StringKind, false, ""},
		"string":         {7, protoreflect.StringKind, false, ""},
		"array":          {8, protoreflect.StringKind, true, ""},
		"map":            {9, protoreflect.MessageKind, false, ""}, // map<string,string>
	},
}

var messages = []proto.Message{
	&AppStreamRequest{}, &ManifestRequestMetadata{}, &EnvEntry{}, &ManifestResponse{}, &RepositoryResponse{},
	&ParametersAnnouncementResponse{}, &File{}, &CheckPluginConfigurationResponse{}, &ParameterAnnouncement{},
}

// TestDescriptorMatchesArgoCD checks every message, field number, name and
// type against Argo CD's protos: these, not our Go names, are the wire format.
func TestDescriptorMatchesArgoCD(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	for _, m := range messages {
		md := m.ProtoReflect().Descriptor()
		want, ok := argoCD[md.FullName()]
		if !ok {
			t.Errorf("message %s is not in Argo CD's protocol", md.FullName())
			continue
		}
		seen[md.FullName()] = true
		if md.Fields().Len() != len(want) {
			t.Errorf("%s has %d fields, Argo CD %d", md.FullName(), md.Fields().Len(), len(want))
		}
		for name, w := range want {
			fd := md.Fields().ByName(name)
			if fd == nil {
				t.Errorf("%s.%s missing", md.FullName(), name)
				continue
			}
			if fd.Number() != w.number || fd.Kind() != w.kind || (fd.Cardinality() == protoreflect.Repeated) != w.repeated && !fd.IsMap() {
				t.Errorf("%s.%s = #%d %v repeated=%v, Argo CD #%d %v repeated=%v", md.FullName(), name,
					fd.Number(), fd.Kind(), fd.Cardinality() == protoreflect.Repeated, w.number, w.kind, w.repeated)
			}
			if w.message != "" && fd.Message().FullName() != w.message {
				t.Errorf("%s.%s is a %s, Argo CD %s", md.FullName(), name, fd.Message().FullName(), w.message)
			}
			if name == "map" && (!fd.IsMap() || fd.MapKey().Kind() != protoreflect.StringKind || fd.MapValue().Kind() != protoreflect.StringKind) {
				t.Errorf("%s.map must be map<string,string>", md.FullName())
			}
		}
	}
	for name := range argoCD {
		if !seen[name] {
			t.Errorf("Argo CD message %s not checked", name)
		}
	}
	if o := File_internal_cmpserver_pluginpb_plugin_proto.Messages().ByName("AppStreamRequest").Oneofs(); o.Len() != 1 || o.Get(0).Name() != "request" {
		t.Error("AppStreamRequest must have the oneof request")
	}

	// Method paths: /plugin.ConfigManagementPluginService/<Method>, with the
	// streaming shape Argo CD's client uses.
	sd := File_internal_cmpserver_pluginpb_plugin_proto.Services().ByName("ConfigManagementPluginService")
	if sd == nil || sd.FullName() != "plugin.ConfigManagementPluginService" {
		t.Fatal("service plugin.ConfigManagementPluginService missing")
	}
	methods := map[protoreflect.Name]struct {
		in, out      protoreflect.FullName
		clientStream bool
	}{
		"GenerateManifest":          {"plugin.AppStreamRequest", "plugin.ManifestResponse", true},
		"MatchRepository":           {"plugin.AppStreamRequest", "plugin.RepositoryResponse", true},
		"GetParametersAnnouncement": {"plugin.AppStreamRequest", "plugin.ParametersAnnouncementResponse", true},
		"CheckPluginConfiguration":  {(&emptypb.Empty{}).ProtoReflect().Descriptor().FullName(), "plugin.CheckPluginConfigurationResponse", false},
	}
	if sd.Methods().Len() != len(methods) {
		t.Errorf("%d methods, Argo CD %d", sd.Methods().Len(), len(methods))
	}
	for name, w := range methods {
		md := sd.Methods().ByName(name)
		if md == nil {
			t.Errorf("method %s missing", name)
			continue
		}
		if md.Input().FullName() != w.in || md.Output().FullName() != w.out || md.IsStreamingClient() != w.clientStream || md.IsStreamingServer() {
			t.Errorf("method %s: %s -> %s clientStream=%v", name, md.Input().FullName(), md.Output().FullName(), md.IsStreamingClient())
		}
	}
	if ConfigManagementPluginService_GenerateManifest_FullMethodName != "/plugin.ConfigManagementPluginService/GenerateManifest" {
		t.Error(ConfigManagementPluginService_GenerateManifest_FullMethodName)
	}
}

// TestWireBytes pins the encoding of a metadata message built by hand from
// the field numbers, as Argo CD's gogo-generated code writes it.
func TestWireBytes(t *testing.T) {
	m := &AppStreamRequest{Request: &AppStreamRequest_Metadata{Metadata: &ManifestRequestMetadata{
		AppName: "a", AppRelPath: "p", Checksum: "c", Size: 5, Env: []*EnvEntry{{Name: "N", Value: "V"}},
	}}}
	got, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	inner := []byte{0x0a, 1, 'a', 0x12, 1, 'p', 0x1a, 1, 'c', 0x20, 5, 0x2a, 6, 0x0a, 1, 'N', 0x12, 1, 'V'}
	want := append([]byte{0x0a, byte(len(inner))}, inner...)
	if !bytes.Equal(got, want) {
		t.Errorf("wire bytes\n got %x\nwant %x", got, want)
	}
}

// versionLine matches the tool versions protoc-gen-go writes in the header,
// which differ between machines without changing the code.
var versionLine = regexp.MustCompile(`(?m)^//\s+(protoc|protoc-gen-go|protoc-gen-go-grpc)\s+v?\S+\s*$`)

// TestGeneratedCodeIsFresh regenerates the stubs into a temporary directory
// with internal/cmpserver/generate.sh and compares. It needs protoc and network
// access for the pinned plugins the first time, so it skips without protoc.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc not installed: run `make generate` (installs Debian's protobuf-compiler) to enable this check")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "../generate.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot run generate.sh here (%v): %s", err, b)
	}
	for _, f := range []string{"plugin.pb.go", "plugin_grpc.pb.go", "repository.pb.go"} {
		committed, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := os.ReadFile(filepath.Join(out, "internal/cmpserver/pluginpb", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(versionLine.ReplaceAll(committed, nil), versionLine.ReplaceAll(fresh, nil)) {
			t.Errorf("%s is stale: run `make generate` and commit the result", f)
		}
	}
}
