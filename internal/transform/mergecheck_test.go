package transform

import (
	"strings"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
)

// TestPatchNewListElements: a strategic-merge patch that would append an
// element to a merge-keyed list is refused when the element is incomplete or
// its key one edit from an existing one (a typo); a real addition passes.
func TestPatchNewListElements(t *testing.T) {
	const deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op-controller\nspec:\n  template:\n    spec:\n      containers:\n"
	for _, tc := range []struct {
		name, patch string
		err         string // "" for none
		contains    string // in the output when it renders
	}{
		{"misspelt container, image only", deploy + "      - name: manger\n        image: quay.io/org/op:v2\n",
			"patches[0]: apps/Deployment ops/op-controller: spec.template.spec.containers[name=manger] matches no container; existing: manager, proxy — did you mean manager? Fix the name (a strategic-merge patch would add a new container holding only image; to add a container named manger next to manager, use a JSON 6902 patch with op: add)", ""},
		{"misspelt container, resources only", deploy + "      - name: Manager\n        resources: {limits: {cpu: 1}}\n",
			"patches[0]: apps/Deployment ops/op-controller: spec.template.spec.containers[name=Manager] matches no container; existing: manager, proxy — fix the name (a strategic-merge patch would add a new container holding only resources, without image)", ""},
		{"container without a name", deploy + "      - image: x.io/y:1\n",
			"patches[0]: apps/Deployment ops/op-controller: spec.template.spec.containers[no name] matches no container; existing: manager, proxy — fix the name (a strategic-merge patch would add a new container holding only image, without name)", ""},
		{"misspelt env of a matched container is an addition", deploy + "      - name: manager\n        env:\n        - name: AA\n          value: x\n", "", "name: AA"},
		{"a sidecar with its name and image", deploy + "      - name: log-shipper\n        image: quay.io/org/shipper:v1\n", "", "name: log-shipper"},
		{"a new init container list", deploy + "      - name: manager\n        image: quay.io/org/op:v2\n" +
			"      initContainers:\n      - name: setup\n", "patches[0]: apps/Deployment ops/op-controller: spec.template.spec.initContainers[name=setup] matches no init container; existing: none — fix the name (a strategic-merge patch would add a new init container holding nothing but its key, without image)", ""},
		{"a new port", deploy + "      - name: manager\n        ports:\n        - containerPort: 8444\n", "", "containerPort: 8444"},
		{"a replaced list is not merged", deploy + "      - $patch: replace\n      - name: only\n        image: x.io/y:1\n", "", "name: only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Patches([]kustomizetypes.Patch{{Patch: tc.patch}}, nil).Filter(parse(t, patchInput))
			switch {
			case tc.err != "":
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error:\n%v\nwant:\n%s", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case !strings.Contains(render(t, out), tc.contains):
				t.Errorf("output lacks %q:\n%s", tc.contains, render(t, out))
			}
		})
	}
}

// TestPatchNewWebhook: the rule follows the schema, not a list of kinds: a
// webhook needs clientConfig, sideEffects and admissionReviewVersions.
func TestPatchNewWebhook(t *testing.T) {
	in := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: vop\nwebhooks:\n- name: vop.example.com\n  clientConfig: {}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n"
	patch := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: vop\nwebhooks:\n- name: vop.exmaple.com\n  failurePolicy: Ignore\n"
	want := "patches[0]: admissionregistration.k8s.io/ValidatingWebhookConfiguration vop: webhooks[name=vop.exmaple.com] matches no webhook; existing: vop.example.com — fix the name (a strategic-merge patch would add a new webhook holding only failurePolicy, without clientConfig, sideEffects, admissionReviewVersions)"
	if msg := runErr(t, Patches([]kustomizetypes.Patch{{Patch: patch}}, nil), in); msg != want {
		t.Errorf("error:\n%s\nwant:\n%s", msg, want)
	}
}

// TestPatchDeletesNothing: a deletion of what the object lacks is reported
// as a no-op (not an error), naming the patch, the object and the field;
// with a target, only when it deletes nothing in any object.
func TestPatchDeletesNothing(t *testing.T) {
	const deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op-controller\nspec:\n  template:\n    spec:\n"
	cases := []struct {
		name    string
		patches []kustomizetypes.Patch
		want    []string
	}{
		{"delete of a missing container", []kustomizetypes.Patch{{Patch: deploy + "      containers:\n      - name: sidecar\n        $patch: delete\n"}},
			[]string{"patches[0]: apps/Deployment ops/op-controller: $patch: delete of spec.template.spec.containers[name=sidecar] deletes nothing: no container has name=sidecar; existing: manager, proxy"}},
		{"delete of a container that is there", []kustomizetypes.Patch{{Patch: deploy + "      containers:\n      - name: proxy\n        $patch: delete\n"}}, nil},
		{"delete of a missing field", []kustomizetypes.Patch{{Patch: deploy + "      affinity:\n        $patch: delete\n"}},
			[]string{"patches[0]: apps/Deployment ops/op-controller: $patch: delete of spec.template.spec.affinity deletes nothing: the object has no spec.template.spec.affinity"}},
		{"null for a missing field", []kustomizetypes.Patch{{Patch: deploy + "      nodeSelector: null\n"}},
			[]string{"patches[0]: apps/Deployment ops/op-controller: spec.template.spec.nodeSelector: null deletes nothing: the object has no spec.template.spec.nodeSelector"}},
		{"null for a field that is there", []kustomizetypes.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op-controller\nspec:\n  replicas: null\n"}}, nil},
		{"delete of an env var in one of the targets", []kustomizetypes.Patch{{Target: target("", "", "Deployment", ""),
			Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        env:\n        - name: A\n          $patch: delete\n"}}, nil},
		{"delete of nothing in every target", []kustomizetypes.Patch{{Target: target("", "", "Deployment", ""),
			Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        env:\n        - name: B\n          $patch: delete\n"}},
			[]string{"patches[0]: apps/Deployment ops/op-controller: $patch: delete of spec.template.spec.containers[name=manager].env[name=B] deletes nothing: no env entry has name=B; existing: A (nor in the 1 other objects the target selects)"}},
	}
	in := patchInput + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\n  namespace: ops\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: x.io/y:1\n"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w warnings
			if _, err := patchesRecording(tc.patches, nil, nil, w.add).Filter(parse(t, in)); err != nil {
				t.Fatal(err)
			}
			if strings.Join(w, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("no-ops:\n%s\nwant:\n%s", strings.Join(w, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestMergeCheckOddShapes: patches whose shapes differ from the object's
// (a map for a list, a scalar for a map, nulls in lists, keys that are not
// scalars) are read without a panic; kustomize's merge judges them.
func TestMergeCheckOddShapes(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op-controller\n"
	for _, body := range []string{
		"spec: 3\n",
		"spec:\n  template:\n    spec:\n      containers: {name: manager}\n",
		"spec:\n  template:\n    spec:\n      containers: [null, 3, [a], {name: {x: y}, image: i}]\n",
		"spec:\n  template:\n    spec:\n      containers:\n      - $patch: delete\n",
		"spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        env: {$patch: delete}\n",
		"spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        $patch: replace\n        image: x\n",
		"spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        ports:\n        - {containerPort: 1, protocol: TCP}\n        - {protocol: UDP}\n",
		"spec:\n  template: ~\n",
		"$patch: delete\n",
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("patch %q: panic %v", body, r)
				}
			}()
			_, _ = patchesRecording([]kustomizetypes.Patch{{Patch: head + body}}, nil, nil, func(string) {}).Filter(parse(t, patchInput))
		}()
	}
}

// TestPatchNewMountNextToASimilarOne: the one-edit rule is for names; a
// mount path one character from another is an addition.
func TestPatchNewMountNextToASimilarOne(t *testing.T) {
	in := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: x.io/op:1\n        volumeMounts:\n        - {name: certs, mountPath: /certs}\n"
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        volumeMounts:\n        - {name: certs2, mountPath: /certs2}\n"
	if out := run(t, Patches([]kustomizetypes.Patch{{Patch: patch}}, nil), in); !strings.Contains(out, "mountPath: /certs2") {
		t.Errorf("the mount was not added:\n%s", out)
	}
	// Without its name, the new mount is incomplete.
	patch = strings.Replace(patch, "name: certs2, ", "", 1)
	want := "patches[0]: apps/Deployment op: spec.template.spec.containers[name=manager].volumeMounts[mountPath=/certs2] matches no volume mount; existing: /certs — fix the mountPath (a strategic-merge patch would add a new volume mount holding nothing but its key, without name)"
	if msg := runErr(t, Patches([]kustomizetypes.Patch{{Patch: patch}}, nil), in); msg != want {
		t.Errorf("error:\n%s\nwant:\n%s", msg, want)
	}
}
