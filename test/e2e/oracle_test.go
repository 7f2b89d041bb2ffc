package e2e

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"
)

// The API-server oracle: every object olm-cmp renders for the corpus (the shared bundles, the
// repository's examples, the bad-input corpus), sent to the real kube-apiserver with
// dryRun=All and fieldValidation=Strict, each verdict held against the validate step's.
//
// The objects and olm-cmp's verdicts come from the main module's TestOracleCandidates
// (internal/render/oracle_test.go), which run.sh runs before the suite: it renders each case up
// to the validate step and asks that step about each object; this module cannot import the
// main module's internal packages. README.md, "The API-server oracle", says why this split.

// knownDisagreements are disagreements the oracle tolerates, keyed "<case> <object key>", each
// with its reason. Keep it empty: a disagreement is a bug of the validate step (or of the
// oracle) to fix. An entry that matches nothing fails the test, so the list cannot go stale.
var knownDisagreements = map[string]string{
	`bad/extra-name-newline rbac.authorization.k8s.io/ClusterRole /"reader\n| **0 safety errors** |"`: "olm-cmp refuses a control character in any name on purpose " +
		"(internal/validate: a newline ends a row of diff's markdown, an escape sequence rewrites a terminal); " +
		"the server's rule for RBAC names (a path segment) lets them through",
}

// oracleLabel marks what the oracle creates for real (CRDs, namespaces).
const oracleLabel = "olm-cmp.e2e/oracle"

// oracleSpecHash is the annotation holding the hash of a CRD's spec as the oracle created it:
// a later case shipping the same CRD name with another spec gets its own.
const oracleSpecHash = "olm-cmp.e2e/spec-sha256"

// candidates is one case as TestOracleCandidates writes it.
type candidates struct {
	Name    string `json:"name"`
	Refused string `json:"refused"`
	Render  string `json:"render"`
	Objects []struct {
		YAML    string `json:"yaml"`
		Verdict string `json:"verdict"`
	} `json:"objects"`
}

// judged is one object: olm-cmp's verdict and the server's.
type judged struct {
	key       string
	olm       string // the validate step's line, "" = passes
	server    string // the server's message, "" = accepted
	unchecked string // why the server could not judge it here ("" = it did)
	note      string // how it was sent (a stand-in CRD for its API, ...)
}

func (j judged) agrees() bool { return (j.olm == "") == (j.server == "") }

type caseResult struct {
	name, refused, render string
	objects               []judged
	took                  time.Duration
}

// TestCorpusOracle is the oracle: run.sh runs it first in the corpus suite, on a control plane
// of its own (it leaves the CRDs and namespaces it created), then TestCorpus on a fresh one.
func TestCorpusOracle(t *testing.T) {
	e := setup(t)
	dir := os.Getenv("E2E_ORACLE_DIR")
	if dir == "" {
		t.Skip("E2E_ORACLE_DIR not set: run.sh's corpus suite writes olm-cmp's candidates there (internal/render TestOracleCandidates)")
	}
	var files []string
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatalf("%v: TestOracleCandidates did not finish (run.sh runs it before the suite)", err)
	}
	if err := json.Unmarshal(b, &files); err != nil || len(files) == 0 {
		t.Fatalf("%s: no cases (%v)", filepath.Join(dir, "index.json"), err)
	}
	api := newAPIClient(t)
	o := &oracle{t: t, api: api, work: e.work, liveCRDs: map[string]string{}, namespaces: map[string]bool{}}
	o.checkPremise()

	start := time.Now()
	var results []caseResult
	for _, f := range files {
		var c candidates
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t0 := time.Now()
		r := o.judgeCase(c)
		r.took = time.Since(t0)
		results = append(results, r)
	}
	report(t, results, time.Since(start))
}

// oracle holds the cluster state the cases build on.
type oracle struct {
	t    *testing.T
	api  *apiClient
	work string
	// liveCRDs: CRD name -> the spec hash the live CRD was created with.
	liveCRDs   map[string]string
	namespaces map[string]bool // namespaces known to exist
	stubs      *applier        // stand-in CRDs for APIs neither the cluster nor the case serves
}

// checkPremise proves what the oracle relies on: a server-side dry-run create validates the
// object before it looks for an existing one, so 409 AlreadyExists means "valid" and an invalid
// object of an existing name still gets its 400/422.
func (o *oracle) checkPremise() {
	t := o.t
	cm := func(extra string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: oracle-premise\n  namespace: default\n" + extra)
	}
	if code, body := o.api.do("POST", "/api/v1/namespaces/default/configmaps", cm(""), nil); code != http.StatusCreated {
		t.Fatalf("create ConfigMap default/oracle-premise: %d %s", code, body)
	}
	defer o.api.do("DELETE", "/api/v1/namespaces/default/configmaps/oracle-premise", nil, nil)
	for _, c := range []struct {
		extra string
		want  int
	}{
		{"", http.StatusConflict},
		{"dta: {a: b}\n", http.StatusBadRequest},
		{"  labels: {a: \"" + strings.Repeat("x", 64) + "\"}\n", http.StatusUnprocessableEntity},
	} {
		code, body := o.api.do("POST", "/api/v1/namespaces/default/configmaps", cm(c.extra), dryRunStrict)
		if code != c.want {
			t.Fatalf("the oracle's premise does not hold: a dry-run create of an existing ConfigMap with %q got %d, want %d: %s", c.extra, code, c.want, body)
		}
	}
}

var dryRunStrict = url.Values{"dryRun": {"All"}, "fieldValidation": {"Strict"}}

// object is one candidate, parsed.
type object struct {
	raw                   []byte
	obj                   map[string]any
	apiVersion, kind      string
	group, version        string
	name, namespace, wave string
	waveN                 int
	olm                   string
}

func (x object) key() string {
	name := x.name
	if name == "" {
		name = str(x.obj, "metadata", "generateName") + "*"
	}
	if strings.IndexFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		name = strconv.Quote(name) // a bad-input case's control characters stay out of the log
	}
	return fmt.Sprintf("%s/%s %s/%s", x.group, x.kind, x.namespace, name)
}

func (o *oracle) judgeCase(c candidates) caseResult {
	t := o.t
	res := caseResult{name: c.Name, refused: c.Refused, render: c.Render}
	if c.Refused != "" {
		return res
	}
	var objs []object
	for i, co := range c.Objects {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(co.YAML), &m); err != nil {
			t.Fatalf("%s: object %d is not YAML: %v", c.Name, i, err)
		}
		x := object{raw: []byte(co.YAML), obj: m, olm: co.Verdict}
		x.apiVersion, _ = m["apiVersion"].(string)
		x.kind, _ = m["kind"].(string)
		x.group, x.version = "", x.apiVersion
		if i := strings.Index(x.apiVersion, "/"); i >= 0 {
			x.group, x.version = x.apiVersion[:i], x.apiVersion[i+1:]
		}
		x.name = str(m, "metadata", "name")
		x.namespace = str(m, "metadata", "namespace")
		if w := str(m, "metadata", "annotations", waveAnnotation); w != "" {
			x.waveN, _ = strconv.Atoi(w)
		}
		if str(m, "metadata", "annotations", "argocd.argoproj.io/hook") != "" {
			x.waveN = 1 << 20 // hooks run after every wave
		}
		objs = append(objs, x)
	}
	// wave order; in a wave, namespaces, then CRDs, then the rest
	rank := func(x object) int {
		switch {
		case x.kind == "Namespace" && x.apiVersion == "v1":
			return 0
		case x.kind == "CustomResourceDefinition" && x.group == "apiextensions.k8s.io":
			return 1
		}
		return 2
	}
	sort.SliceStable(objs, func(i, j int) bool {
		if objs[i].waveN != objs[j].waveN {
			return objs[i].waveN < objs[j].waveN
		}
		return rank(objs[i]) < rank(objs[j])
	})

	crds := map[string]map[string]any{} // group/kind -> CRD object, of this case
	used := map[string]bool{}           // group/kind of the case's other objects
	for _, x := range objs {
		if rank(x) == 1 {
			crds[crdGroupKind(x.obj)] = x.obj
		} else {
			used[x.group+"/"+x.kind] = true
		}
	}
	o.stubs = newApplier(t, o.work)
	o.stubs.crds = crds
	crdRefused := map[string]string{} // group/kind -> the server's refusal
	res.objects = make([]judged, len(objs))
	for i := range objs {
		res.objects[i] = judged{key: objs[i].key(), olm: objs[i].olm}
	}
	// wave by wave: namespaces (then created), CRDs (then created, and Established, when the case
	// has custom resources of them: creating the large CRDs of the corpus is most of the
	// oracle's time), the rest; dry runs of one wave in parallel
	for lo := 0; lo < len(objs); {
		hi := lo
		for hi < len(objs) && objs[hi].waveN == objs[lo].waveN {
			hi++
		}
		var ns, defs, rest []int
		for i := lo; i < hi; i++ {
			switch rank(objs[i]) {
			case 0:
				ns = append(ns, i)
			case 1:
				defs = append(defs, i)
			default:
				rest = append(rest, i)
			}
		}
		o.dryRunAll(objs, res.objects, ns, nil)
		for _, i := range ns {
			if res.objects[i].server == "" {
				o.ensureNamespace(objs[i].name, objs[i].raw)
			}
		}
		o.dryRunAll(objs, res.objects, defs, nil)
		var created []string
		for _, i := range defs {
			if msg := res.objects[i].server; msg != "" {
				crdRefused[crdGroupKind(objs[i].obj)] = msg
			} else if used[crdGroupKind(objs[i].obj)] && o.ensureCRD(objs[i]) {
				created = append(created, objs[i].name)
			}
		}
		for _, name := range created {
			o.waitEstablished(name)
		}
		var send []int
		resources := map[int]apiResource{}
		for _, i := range rest {
			x, j := &objs[i], &res.objects[i]
			gk := x.group + "/" + x.kind
			if msg, ok := crdRefused[gk]; ok {
				j.unchecked = "its CRD was refused by the API server: " + firstLine(msg)
				continue
			}
			if reason := o.stubs.skipReason(Doc{APIVersion: x.apiVersion, Kind: x.kind, Obj: x.obj}); reason != "" {
				j.unchecked = reason
				continue
			}
			r, note, refusal := o.resource(*x, crds[gk] != nil)
			j.note = note
			if refusal != "" {
				j.server = refusal
				continue
			}
			if r.Namespaced {
				if x.namespace == "" {
					j.note = strings.TrimPrefix(j.note+"; no namespace: sent to default", "; ")
					x.namespace = "default"
				}
				o.ensureNamespace(x.namespace, nil)
			}
			resources[i] = r
			send = append(send, i)
		}
		o.dryRunAll(objs, res.objects, send, resources)
		lo = hi
	}
	return res
}

// dryRunAll dry-runs objs[i] for each i of idx, a few at a time, into js[i].server; resources
// gives each object's API resource (nil: Namespaces and CRDs).
func (o *oracle) dryRunAll(objs []object, js []judged, idx []int, resources map[int]apiResource) {
	work := make(chan int)
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for range min(4, len(idx)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r, ok := resources[i]
				if !ok {
					r = apiResource{Name: "namespaces"}
					if objs[i].kind == "CustomResourceDefinition" {
						r = apiResource{Name: "customresourcedefinitions"}
					}
				}
				js[i].server, errs[i] = o.dryRun(objs[i], r)
			}
		}()
	}
	for _, i := range idx {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			o.t.Fatalf("%s: %v", objs[i].key(), err)
		}
	}
}

// dryRun creates x with dryRun=All and fieldValidation=Strict and returns the server's refusal,
// "" when it accepts (201, or 409: valid, and the name exists).
func (o *oracle) dryRun(x object, r apiResource) (string, error) {
	code, body, err := o.api.try("POST", r.path(x.group, x.version, x.namespace), x.raw, dryRunStrict)
	switch {
	case err != nil:
		return "", err
	case code == http.StatusCreated, code == http.StatusOK, code == http.StatusConflict:
		return "", nil
	}
	return fmt.Sprintf("%d %s", code, statusMessage(body)), nil
}

// ensureNamespace makes the namespace exist (for real): the object the render holds when it
// has one, else a bare namespace (Argo CD's CreateNamespace).
func (o *oracle) ensureNamespace(name string, raw []byte) {
	if o.namespaces[name] {
		return
	}
	if code, _ := o.api.do("GET", "/api/v1/namespaces/"+name, nil, nil); code == http.StatusOK {
		o.namespaces[name] = true
		return
	}
	if raw == nil {
		raw = []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n")
	}
	body := labelled(o.t, raw, nil)
	if code, b := o.api.do("POST", "/api/v1/namespaces", body, nil); code != http.StatusCreated {
		o.t.Fatalf("create namespace %s: %d %s", name, code, statusMessage(b))
	}
	o.namespaces[name] = true
}

// ensureCRD makes x the live CRD of its name, exactly (its custom resources are judged by its
// schema): created when absent, deleted and created again when a live one has another spec.
// It reports whether it created one (then wait for it to be Established).
func (o *oracle) ensureCRD(x object) bool {
	t := o.t
	spec, _ := json.Marshal(x.obj["spec"])
	sum := sha256.Sum256(spec)
	hash := hex.EncodeToString(sum[:])
	if o.liveCRDs[x.name] == hash {
		return false
	}
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if code, _ := o.api.do("GET", path+"/"+x.name, nil, nil); code == http.StatusOK {
		o.deleteCRD(x.name)
	}
	body := labelled(t, x.raw, map[string]string{oracleSpecHash: hash})
	if code, b := o.api.do("POST", path, body, nil); code != http.StatusCreated {
		t.Fatalf("CRD %s: a dry run accepted it, the create refuses it: %d %s", x.name, code, statusMessage(b))
	}
	o.liveCRDs[x.name] = hash
	o.api.forget(str(x.obj, "spec", "group"))
	return true
}

func (o *oracle) deleteCRD(name string) {
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name
	o.api.do("DELETE", path, nil, nil)
	o.waitGone(path)
	delete(o.liveCRDs, name)
}

func (o *oracle) waitGone(path string) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, b := o.api.do("GET", path, nil, nil)
		if code == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("%s still there 2 minutes after its deletion: %d %s", path, code, head(string(b)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (o *oracle) waitEstablished(name string) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, b := o.api.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil, nil)
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status, Message string }
			}
		}
		_ = json.Unmarshal(b, &crd)
		for _, c := range crd.Status.Conditions {
			if c.Type == "Established" && c.Status == "True" {
				return
			}
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("CRD %s not Established after 2 minutes: %+v", name, crd.Status.Conditions)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// resource finds x's API resource by discovery. An API of another operator (a group with a dot)
// that neither the cluster nor the case serves gets a permissive stand-in CRD, as the corpus
// suite does, so its metadata is still judged; a built-in API the server does not serve is the
// server's refusal.
func (o *oracle) resource(x object, ownCRD bool) (apiResource, string, string) {
	note := ""
	if _, ok := o.api.resource(x.group, x.version, x.kind); !ok && !ownCRD {
		if !strings.Contains(x.group, ".") {
			return apiResource{}, "", fmt.Sprintf("404 the API server does not serve %s %s", x.apiVersion, x.kind)
		}
		o.stubs.ensureServed(Doc{APIVersion: x.apiVersion, Kind: x.kind, Name: x.name, Namespace: x.namespace, Obj: x.obj})
		note = "stand-in CRD (API not in the render)"
	}
	// a CRD just Established: discovery follows within moments
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, ok := o.api.resource(x.group, x.version, x.kind); ok {
			return r, note, ""
		}
		if time.Now().After(deadline) {
			return apiResource{}, note, fmt.Sprintf("the API server does not serve %s %s, although its CRD is Established", x.apiVersion, x.kind)
		}
		time.Sleep(200 * time.Millisecond)
		o.api.forget(x.group)
	}
}

// labelled is raw (YAML) as JSON, with the oracle's label and the given annotations.
func labelled(t *testing.T, raw []byte, annotations map[string]string) []byte {
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	md, _ := m["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[oracleLabel] = "true"
	md["labels"] = labels
	if len(annotations) > 0 {
		a, _ := md["annotations"].(map[string]any)
		if a == nil {
			a = map[string]any{}
		}
		for k, v := range annotations {
			a[k] = v
		}
		md["annotations"] = a
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tally counts one case's objects (or all of them).
type tally struct{ objects, sent, agree, disagree, unchecked, olmRefuses, serverRefuses int }

func (a *tally) add(b tally) {
	a.objects += b.objects
	a.sent += b.sent
	a.agree += b.agree
	a.disagree += b.disagree
	a.unchecked += b.unchecked
	a.olmRefuses += b.olmRefuses
	a.serverRefuses += b.serverRefuses
}

// report prints the table (per case: objects, sent to the server, agreements, disagreements,
// unchecked, and how many each side refuses) and each disagreement, and fails on any not in
// knownDisagreements.
func report(t *testing.T, results []caseResult, took time.Duration) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tobjects\tsent\tagree\tdisagree\tunchecked\tolm-cmp refuses\tserver refuses\ttime")
	row := func(name string, n tally, took time.Duration) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\n", name, n.objects, n.sent, n.agree, n.disagree, n.unchecked, n.olmRefuses, n.serverRefuses, took.Round(100*time.Millisecond))
	}
	var refusedEarly, disagreements []string
	used := map[string]bool{}
	var total tally
	for _, r := range results {
		if r.refused != "" {
			refusedEarly = append(refusedEarly, r.name)
			continue
		}
		n := tally{objects: len(r.objects)}
		for _, j := range r.objects {
			if j.olm != "" {
				n.olmRefuses++
			}
			if j.unchecked != "" {
				n.unchecked++
				continue
			}
			n.sent++
			if j.server != "" {
				n.serverRefuses++
			}
			if j.agrees() {
				n.agree++
				continue
			}
			n.disagree++
			k := r.name + " " + j.key
			if _, ok := knownDisagreements[k]; ok {
				used[k] = true
				continue
			}
			olm, srv := "passes", "accepts"
			if j.olm != "" {
				olm = "refuses: " + j.olm
			}
			if j.server != "" {
				srv = "refuses: " + j.server
			}
			if j.note != "" {
				srv += " (" + j.note + ")"
			}
			disagreements = append(disagreements, fmt.Sprintf("%s: %s\n    olm-cmp %s\n    server  %s", r.name, j.key, olm, srv))
		}
		row(r.name, n, r.took)
		total.add(n)
	}
	row("total", total, took)
	tw.Flush()
	t.Logf("API-server oracle: %d cases in %v (dryRun=All, fieldValidation=Strict)\n%s", len(results), took.Round(time.Second), buf.String())
	if len(refusedEarly) > 0 {
		t.Logf("%d cases refused before the validate step (no objects to send): %s", len(refusedEarly), strings.Join(refusedEarly, ", "))
	}
	for _, r := range results {
		for _, j := range r.objects {
			switch {
			case j.unchecked != "":
				t.Logf("unchecked: %s: %s: %s", r.name, j.key, j.unchecked)
			case j.agrees() && j.olm != "":
				t.Logf("both refuse: %s: %s\n    olm-cmp %s\n    server  %s", r.name, j.key, j.olm, j.server)
			}
		}
	}
	for _, d := range disagreements {
		t.Errorf("disagreement: %s", d)
	}
	for k, why := range knownDisagreements {
		if !used[k] {
			t.Errorf("knownDisagreements[%q] (%s) matches no disagreement: remove it", k, why)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ---------------------------------------------------------------- a client of the API server

// apiClient talks to the API server of $KUBECONFIG (up.sh's: a CA and a client certificate)
// directly: one request per object, the server's answer as it is.
type apiClient struct {
	t      *testing.T
	server string
	http   *http.Client
	disc   map[string]map[string]apiResource // group/version -> kind -> resource
}

type apiResource struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
}

func (r apiResource) path(group, version, namespace string) string {
	p := "/apis/" + group + "/" + version
	if group == "" {
		p = "/api/" + version
	}
	if r.Namespaced {
		p += "/namespaces/" + namespace
	}
	return p + "/" + r.Name
}

func newAPIClient(t *testing.T) *apiClient {
	b, err := os.ReadFile(os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			User struct {
				Cert string `json:"client-certificate-data"`
				Key  string `json:"client-key-data"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil || len(kc.Clusters) == 0 || len(kc.Users) == 0 {
		t.Fatalf("KUBECONFIG: not up.sh's kubeconfig (%v)", err)
	}
	dec := func(s string) []byte {
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("KUBECONFIG: %v", err)
		}
		return d
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(dec(kc.Clusters[0].Cluster.CA))
	cert, err := tls.X509KeyPair(dec(kc.Users[0].User.Cert), dec(kc.Users[0].User.Key))
	if err != nil {
		t.Fatalf("KUBECONFIG: %v", err)
	}
	return &apiClient{t: t, server: kc.Clusters[0].Cluster.Server, disc: map[string]map[string]apiResource{},
		http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}}
}

// do sends a request (a YAML body when there is one) and returns the status and body; a
// transport failure fails the test.
func (c *apiClient) do(method, path string, body []byte, q url.Values) (int, []byte) {
	code, b, err := c.try(method, path, body, q)
	if err != nil {
		c.t.Fatal(err)
	}
	return code, b
}

// try is do that returns a transport failure (for other goroutines than the test's).
func (c *apiClient) try(method, path string, body []byte, q url.Values) (int, []byte, error) {
	u := c.server + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/yaml") // JSON is YAML
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// resource looks kind up in the discovery document of group/version (cached).
func (c *apiClient) resource(group, version, kind string) (apiResource, bool) {
	gv := group + "/" + version
	m, ok := c.disc[gv]
	if !ok {
		m = map[string]apiResource{}
		p := "/apis/" + gv
		if group == "" {
			p = "/api/" + version
		}
		if code, b := c.do("GET", p, nil, nil); code == http.StatusOK {
			var list struct {
				Resources []apiResource `json:"resources"`
			}
			_ = json.Unmarshal(b, &list)
			for _, r := range list.Resources {
				if !strings.Contains(r.Name, "/") { // not a subresource
					m[r.Kind] = r
				}
			}
		}
		c.disc[gv] = m
	}
	r, ok := m[kind]
	return r, ok
}

// forget drops the discovery documents of group (a CRD of it was created).
func (c *apiClient) forget(group string) {
	for gv := range c.disc {
		if strings.HasPrefix(gv, group+"/") {
			delete(c.disc, gv)
		}
	}
}

// statusMessage is the message of a metav1.Status body, else the body.
func statusMessage(b []byte) string {
	var s struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &s) == nil && s.Message != "" {
		return s.Message
	}
	return head(strings.TrimSpace(string(b)))
}
