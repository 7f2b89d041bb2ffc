package transform

import (
	"strings"
	"testing"
)

func TestSettleHook(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  annotations:\n    argocd.argoproj.io/sync-wave: \"5\"\n"
	out := run(t, SettleHook("ns", "lws-operator-sync-settled"), in)
	want := `apiVersion: v1
kind: ConfigMap
metadata:
  name: lws-operator-sync-settled
  namespace: ns
  annotations:
    argocd.argoproj.io/hook: 'PostSync'
    argocd.argoproj.io/hook-delete-policy: 'HookSucceeded,BeforeHookCreation'
data:
  purpose: 'Argo CD PostSync hook of olm-cmp`
	docs := strings.Split(out, "---\n")
	if len(docs) != 2 {
		t.Fatalf("want the input object and the hook, got %d documents:\n%s", len(docs), out)
	}
	if !strings.HasPrefix(docs[1], want) {
		t.Errorf("hook:\n%s\nwant it to start with:\n%s", docs[1], want)
	}
	// A spec named as a person would name it: the hook's name is made valid,
	// as the auth-reader binding's is.
	hook, err := SettleHook("ns", "GitLab Operator-sync-settled").Filter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := hook[0].GetName(); got != "gitlab-operator-sync-settled" {
		t.Errorf("hook of a spec named \"GitLab Operator\" is named %q, want gitlab-operator-sync-settled", got)
	}
	// A long metadata.name is cut to fit 253 characters before the suffix,
	// as the auth-reader binding's is: the hook stays recognisable.
	long := strings.Repeat("a", 250)
	hook, err = SettleHook("ns", long+"-sync-settled").Filter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hook[0].GetName(), strings.Repeat("a", 253-len("-sync-settled"))+"-sync-settled"; got != want {
		t.Errorf("hook of a 250-character metadata.name is named %q, want %q", got, want)
	}
	if _, err := SettleHook("", "x").Filter(nil); err == nil {
		t.Error("a hook without a namespace was accepted")
	}
}

// A hook sorts after every object of every wave: Argo CD runs PostSync hooks after the sync
// phase, and the stream reads in apply order.
func TestSortPutsHooksLast(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: hook
  annotations: {argocd.argoproj.io/hook: PostSync}
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
  annotations: {argocd.argoproj.io/sync-wave: "-4"}
---
apiVersion: example.com/v1
kind: Thing
metadata:
  name: cr
  annotations: {argocd.argoproj.io/sync-wave: "7"}
`
	out, err := Sort().Filter(parse(t, in))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range out {
		names = append(names, n.GetName())
	}
	if got := strings.Join(names, ","); got != "ns,cr,hook" {
		t.Errorf("order %s, want ns,cr,hook", got)
	}
}

// SyncWaves leaves resource hooks alone (an extra manifest's own hook keeps its annotations):
// they run in their hook phase, after every wave.
func TestSyncWavesSkipsHooks(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n  annotations:\n    argocd.argoproj.io/hook: PostSync\n"
	out := run(t, SyncWaves(testWaves, true), in)
	if strings.Contains(out, "sync-wave") || strings.Contains(out, "sync-options") {
		t.Errorf("a hook got sync annotations:\n%s", out)
	}
	out = run(t, SyncWaves(testWaves, true), strings.Replace(in, "    argocd.argoproj.io/hook: PostSync\n", "    x: y\n", 1))
	if !strings.Contains(out, "sync-wave") {
		t.Errorf("the same ConfigMap without the hook annotation got no wave:\n%s", out)
	}
}
