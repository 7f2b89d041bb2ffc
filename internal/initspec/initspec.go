// Package initspec writes a first olm-cmp.yaml for a bundle (`olm-cmp
// init`): the bundle or catalog pinned as `resolve --write` pins it, the
// namespace the CSV suggests, the install mode, the alm-examples kinds (as a
// comment), and every finding of the requirements report answered with a
// commented entry (clusterAPIs for what the fix says to install, accept for
// the rest) so that the spec renders with strict on the first try. The
// findings come from the render pipeline itself (Build); this file only turns
// them into text.
package initspec

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Source is how the spec names its bundle: an image or directory (Bundle,
// with Version and Digest for a pinned image), or a catalog's choice.
type Source struct {
	Bundle, Catalog, Package, Channel, Version, Digest string
	// Range is the version range the user asked the catalog for, kept for
	// a comment (Version then holds the exact version chosen).
	Range string
}

// SuggestedNamespace is the CSV annotation naming the namespace its
// authors meant the operator to run in.
const SuggestedNamespace = "operatorframework.io/suggested-namespace"

// TODO starts the comment of every line whose value init had to guess: the
// lines a user must still edit (`grep -c TODO olm-cmp.yaml`).
const TODO = "TODO:"

// Plan is the spec init writes, with the comments that explain each entry.
type Plan struct {
	Name      string
	Source    Source
	Namespace string
	// nsNote says where Namespace came from; nsTODO marks a guess.
	nsNote string
	nsTODO bool

	// Exclude drops the OpenShift console's objects (ExcludeConsole);
	// excludeNote says which.
	Exclude     []string
	excludeNote string

	// PodSecurity, when set, is the pod-security.kubernetes.io/enforce
	// label the SCC findings ask of the install namespace; podSecurityTODO
	// marks a guess (the SCCs named say no level).
	PodSecurity     string
	podSecurityTODO bool

	Watch     []string
	watchNote string
	watchTODO bool

	// Examples are the alm-examples kinds, in order, without repeats.
	Examples []string
	// ExcludeFiles are the bundle files skipped unread (--exclude-file).
	ExcludeFiles []string
	// OtherTools are the files beside the spec that belong to other tools
	// (an Argo CD Application, a kustomization, a values file):
	// spec.extraManifests.exclude leaves them out.
	OtherTools []render.OtherToolFile

	ClusterAPIs []Group
	Accept      []Group
	// AuthReaderBinding is set for an operator seen reading the API
	// server's authentication ConfigMap (AnswerRan); authReaderNote says so.
	AuthReaderBinding bool
	authReaderNote    string
	// images and pullSecrets are commented-out suggestions for the image
	// findings accepted (a placeholder to replace, a registry needing
	// credentials): what the accept entries stand in for.
	images      []string
	pullSecrets bool
}

// Group is a run of entries under one comment (a category, or findings that
// share their message).
type Group struct {
	Header  []string
	Entries []Entry
}

// Entry is one list item with its comments.
type Entry struct {
	Value string
	// Above are comment lines before the entry; Trailing the comment after it.
	Above    []string
	Trailing string
}

// New starts the plan of b, named by src; namespace, when not empty, is the
// user's choice of install namespace.
func New(b *bundle.Bundle, src Source, namespace string) (*Plan, error) {
	p := &Plan{Source: src, Name: dnsLabel(b.Package)}
	if p.Name == "" {
		p.Name = dnsLabel(b.CSV.Name)
	}
	switch sug := b.CSV.Annotations[SuggestedNamespace]; {
	case namespace != "":
		if len(validation.IsDNS1123Label(namespace)) > 0 {
			return nil, fmt.Errorf("--namespace %s: not a namespace name: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", echo.Quote(namespace))
		}
		p.Namespace, p.nsNote = namespace, "chosen with --namespace"
	case sug != "" && len(validation.IsDNS1123Label(sug)) == 0:
		p.Namespace, p.nsNote = sug, "the CSV's "+SuggestedNamespace
	default:
		p.Namespace, p.nsTODO = p.Name, true
		p.nsNote = TODO + " choose the install namespace (the CSV suggests none; this is the package name)"
		if sug != "" {
			p.nsNote = TODO + " choose the install namespace (the CSV's " + SuggestedNamespace + " " + echo.Quote(sug) + " is not a namespace name)"
		}
		if p.Namespace == "" {
			p.Namespace = "operator"
		}
	}
	p.installMode(b.CSV)
	p.Examples = examples(b.CSV)
	return p, nil
}

// installMode chooses watchNamespaces as OLM v1 would default them, writing
// them out when the operator does not watch every namespace.
func (p *Plan) installMode(csv *v1alpha1.ClusterServiceVersion) {
	modes := map[v1alpha1.InstallModeType]bool{}
	var names []string
	for _, m := range csv.Spec.InstallModes {
		if m.Supported {
			modes[m.Type] = true
			names = append(names, string(m.Type))
		}
	}
	supported := strings.Join(names, ", ")
	switch {
	case modes[v1alpha1.InstallModeTypeAllNamespaces]:
		p.watchNote = "unset, the operator watches every namespace (install modes: " + supported + ")"
	case modes[v1alpha1.InstallModeTypeOwnNamespace]:
		p.Watch = []string{p.Namespace}
		p.watchNote = "OwnNamespace: the operator watches its install namespace (install modes: " + supported + ")"
	case modes[v1alpha1.InstallModeTypeSingleNamespace], modes[v1alpha1.InstallModeTypeMultiNamespace]:
		p.Watch, p.watchTODO = []string{"default"}, true
		p.watchNote = TODO + " the namespace(s) the operator watches, other than its own (install modes: " + supported + ")"
	}
}

// examples lists the kinds of the CSV's alm-examples, each once.
func examples(csv *v1alpha1.ClusterServiceVersion) []string {
	var list []struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &list) != nil {
		return nil
	}
	var kinds []string
	for _, e := range list {
		if e.Kind != "" && !slices.Contains(kinds, e.Kind) {
			kinds = append(kinds, e.Kind)
		}
	}
	return kinds
}

// Spec is the spec the plan writes (what Text says), for the render passes.
func (p *Plan) Spec() spec.Spec {
	s := spec.Spec{
		Bundle: p.Source.Bundle, Catalog: p.Source.Catalog, Package: p.Source.Package, Channel: p.Source.Channel,
		Version: p.Source.Version, Digest: p.Source.Digest,
		Namespace: p.Namespace, WatchNamespaces: p.Watch, ExcludeFiles: p.ExcludeFiles, Exclude: p.Exclude,
	}
	if p.PodSecurity != "" {
		s.NamespaceLabels = map[string]string{podSecurityEnforce: p.PodSecurity}
	}
	s.AuthReaderBinding = p.AuthReaderBinding
	if len(p.OtherTools) > 0 {
		s.ExtraManifests = &spec.ExtraManifests{Exclude: p.otherToolGlobs()}
	}
	for _, g := range p.ClusterAPIs {
		for _, e := range g.Entries {
			s.ClusterAPIs = append(s.ClusterAPIs, e.Value)
		}
	}
	for _, g := range p.Accept {
		for _, e := range g.Entries {
			s.Accept = append(s.Accept, e.Value)
		}
	}
	return s
}

// otherToolGlobs are the exclude globs of OtherTools: each file name with
// its glob characters in a class of their own ([*]), so it matches that
// file alone. A backslash, which spec globs may not hold, becomes ?: the
// glob then matches that file and the rare names that differ from it there.
func (p *Plan) otherToolGlobs() []string {
	out := make([]string, len(p.OtherTools))
	for i, f := range p.OtherTools {
		out[i] = globEscaper.Replace(f.File)
	}
	return out
}

var globEscaper = strings.NewReplacer(`*`, `[*]`, `?`, `[?]`, `[`, `[[]`, `\`, `?`)

// AnswerInstalls is the first pass over a report: a finding whose fix is
// to install what serves an API (cert-manager for webhook certificates, an
// API an object of the render uses) gets a clusterAPIs entry, stating that
// the cluster will serve it. OpenShift's APIs are not installable: they are
// left to Accept.
func (p *Plan) AnswerInstalls(findings []requirements.Finding) {
	var g Group
	for _, f := range requirements.Pending(findings) {
		if f.Severity != requirements.Required || !(f.Category == requirements.API || f.Category == requirements.Certificates) {
			continue
		}
		group, _, _ := strings.Cut(f.Subject, "/")
		if isOpenShift(group) || !isAPIName(f.Subject) {
			continue
		}
		g.Entries = append(g.Entries, Entry{
			Value:    f.Subject,
			Above:    quote(f),
			Trailing: TODO + " install what serves it before the first sync",
		})
	}
	if len(g.Entries) > 0 {
		g.Header = []string{"APIs the cluster must serve beyond vanilla Kubernetes: install them first"}
		p.ClusterAPIs = append(p.ClusterAPIs, g)
	}
}

// AnswerRest is the second pass: every finding still pending is accepted.
// The RBAC-only API findings (the report's only API warnings) are grouped,
// OpenShift's apart from the others since their fix differs, under one
// comment quoting what their messages share, each entry's own part (who
// provides the group) beside it; those of a group family the bundle owns
// CRDs in (kubevirt.io's) become one glob. Every other finding gets its own
// comment quoting it and its fix.
func (p *Plan) AnswerRest(findings []requirements.Finding, owned []string) {
	pending := requirements.Pending(findings)
	globbed := ownedFamilies(pending, owned)
	var groups []Group
	for _, glob := range slices.Sorted(maps.Keys(globbed)) {
		fs := globbed[glob]
		subjects := make([]string, len(fs))
		for i, f := range fs {
			subjects[i] = f.Subject
		}
		groups = append(groups, Group{
			Header: []string{
				fmt.Sprintf("%d warnings for groups of *.%s, the API family of the bundle's own CRDs (its operands ship them): %s",
					len(fs), glob, echo.Text(strings.Join(subjects, ", "))),
				`"` + echo.Text(template(fs[0])) + `"`,
			},
			Entries: []Entry{{Value: "api:*." + glob}},
		})
	}
	covered := func(f requirements.Finding) bool {
		for glob := range globbed {
			if f.Category == requirements.API && strings.HasSuffix(f.Subject, "."+glob) {
				return true
			}
		}
		return false
	}
	var openshift, rbac []requirements.Finding
	for _, f := range pending {
		switch {
		case covered(f):
		case f.Category == requirements.API && f.Severity == requirements.Warning:
			if group, _, _ := strings.Cut(f.Subject, "/"); isOpenShift(group) {
				openshift = append(openshift, f)
			} else {
				rbac = append(rbac, f)
			}
		default:
			e := Entry{Value: acceptValue(f), Above: quote(f)}
			switch {
			case f.Category == requirements.Image:
				e.Trailing = TODO + " fix the image (see the commented lines above), then drop this entry"
				p.imageSuggestion(f)
			case f.PodSecurityLevel() != "" || isSCC(f):
				e.Trailing = p.answerPodSecurity(f)
			case f.Severity == requirements.Required:
				e.Trailing = TODO + " " + firstAction(f.Fix)
			}
			groups = append(groups, Group{Entries: []Entry{e}})
		}
	}
	groups = append(groups, shared(openshift)...)
	groups = append(groups, shared(rbac)...)
	slices.SortStableFunc(groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(categoryIndex(a), categoryIndex(b)), strings.Compare(a.Entries[0].Value, b.Entries[0].Value))
	})
	p.Accept = append(p.Accept, groups...)
}

// firstAction is the one thing left to do for an error finding init
// accepts: its fix up to where it turns to accepting it, or to another
// branch ("…, then accept", "; otherwise accept", "; or …", "; on
// OpenShift …"), with what an action names after "first" dropped.
func firstAction(fix string) string {
	cut := len(fix)
	for _, sep := range []string{", then accept", "; otherwise accept", ", or accept", "; or ", "; on OpenShift"} {
		if i := strings.Index(fix, sep); i >= 0 && i < cut {
			cut = i
		}
	}
	action := strings.TrimSpace(fix[:cut])
	if action == "" || len(action) > 160 {
		return "act on the fix above first"
	}
	return echo.Text(action)
}

// consoleGroup is the OpenShift console's API group: its objects (quick
// starts, YAML samples, CLI downloads, plugins) only show in that console.
const consoleGroup = "console.openshift.io"

// ExcludeConsole is the first answer to a report: when the render holds
// objects of the OpenShift console's API (an error finding: nothing serves
// it elsewhere), they are dropped with spec.exclude, which no cluster
// without that console misses.
func (p *Plan) ExcludeConsole(findings []requirements.Finding) {
	for _, f := range requirements.Pending(findings) {
		group, _, _ := strings.Cut(f.Subject, "/")
		if f.Category == requirements.API && f.Severity == requirements.Required && group == consoleGroup {
			p.Exclude = []string{consoleGroup + "/*"}
			p.excludeNote = "the OpenShift console's objects (" + firstSource(f.Source) + "): nothing shows them without that console"
			return
		}
	}
}

// podSecurityEnforce is the Pod Security label init writes.
const podSecurityEnforce = spec.PodSecurityPrefix + "enforce"

// isSCC reports whether f is one of the findings whose fix is a Pod
// Security label on the install namespace.
func isSCC(f requirements.Finding) bool {
	return f.Category == requirements.OpenShift && (f.Subject == "securitycontextconstraints" || f.Subject == "openshift.io/scc")
}

// answerPodSecurity labels the install namespace as the SCC finding f
// asks (the loosest level of such findings; privileged, marked TODO, when
// one does not say), and returns the accept entry's comment.
func (p *Plan) answerPodSecurity(f requirements.Finding) string {
	level := f.PodSecurityLevel()
	if level == "" {
		level, p.podSecurityTODO = "privileged", true
	}
	if p.PodSecurity == "" || podSecurityRank(level) > podSecurityRank(p.PodSecurity) {
		p.PodSecurity = level
	}
	return "the label " + podSecurityEnforce + " under namespaceLabels answers it"
}

func podSecurityRank(level string) int {
	return slices.Index([]string{"restricted", "baseline", "privileged"}, level)
}

// shared puts findings under one comment quoting the end their message
// templates share (at a word boundary, at least minShared characters),
// each entry's own beginning ("provided by Velero") beside it, and the fix
// of the finding whose message is the shared part alone (else the first's).
// Without such a shared part, each finding gets its own quote.
func shared(fs []requirements.Finding) []Group {
	if len(fs) == 0 {
		return nil
	}
	fs = slices.SortedFunc(slices.Values(fs), func(a, b requirements.Finding) int { return strings.Compare(a.Subject, b.Subject) })
	common := template(fs[0])
	for _, f := range fs[1:] {
		common = commonSuffix(common, template(f))
	}
	if i := strings.Index(common, " "); len(fs) > 1 && i >= 0 && !strings.HasPrefix(template(fs[0]), common) {
		// Start at a word: "only the operator's …", not "ly the operator's …".
		for _, f := range fs {
			if template(f) == common {
				i = -1
			}
		}
		if i >= 0 {
			common = common[i+1:]
		}
	}
	if len(fs) == 1 || len(common) < minShared {
		var out []Group
		for _, f := range fs {
			out = append(out, Group{Entries: []Entry{{Value: acceptValue(f), Above: quote(f)}}})
		}
		return out
	}
	fix := fs[0]
	for _, f := range fs {
		if template(f) == common {
			fix = f
			break
		}
	}
	each := fmt.Sprintf(`%d %ss: "%s"`, len(fs), fs[0].Severity, echo.Text(common))
	if slices.ContainsFunc(fs, func(f requirements.Finding) bool { return template(f) != common }) {
		each = fmt.Sprintf(`%d %ss, each "… %s"`, len(fs), fs[0].Severity, echo.Text(common))
	}
	g := Group{Header: []string{
		each,
		"fix: " + echo.Text(strings.ReplaceAll(fix.Fix, fix.Subject, "<group>")),
	}}
	for _, f := range fs {
		own := strings.TrimSuffix(strings.TrimSuffix(template(f), common), " ")
		g.Entries = append(g.Entries, Entry{Value: acceptValue(f), Trailing: echo.Text(strings.TrimSuffix(own, ":"))})
	}
	return []Group{g}
}

// minShared is the shortest shared message worth one comment for several
// findings.
const minShared = 40

// commonSuffix is the longest common end of a and b.
func commonSuffix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return a[len(a)-n:]
}

// acceptValue is f's accept entry: its key, or, past spec.MaxAcceptLength
// (a 253-character group, a long image reference), its beginning and a *,
// which matches it.
func acceptValue(f requirements.Finding) string {
	k := f.Key()
	if len(k) <= spec.MaxAcceptLength {
		return k
	}
	cut := spec.MaxAcceptLength - 1
	for cut > 0 && !utf8.RuneStart(k[cut]) {
		cut--
	}
	return k[:cut] + "*"
}

// categoryIndex orders accept groups as the report orders categories.
func categoryIndex(g Group) int {
	c, _, _ := strings.Cut(g.Entries[0].Value, ":")
	return slices.Index(requirements.Categories, requirements.Category(c))
}

// imageSuggestion records what would fix an accepted image finding, for the
// commented-out images and imagePullSecrets lines.
func (p *Plan) imageSuggestion(f requirements.Finding) {
	if strings.Contains(f.Fix, "spec.images") {
		p.images = append(p.images, f.Subject)
	}
	if strings.Contains(f.Fix, "spec.imagePullSecrets") {
		p.pullSecrets = true
	}
}

// ownedFamilies finds the globs that are safe: the RBAC-only API warnings
// (the only API warnings the report gives) whose group ends in ".D", D being
// a DNS domain of at least two labels under which the bundle owns CRDs (the
// vendor's own API family: kubevirt.io for hco.kubevirt.io), not a domain
// many projects share, when two or more findings share it. The glob then
// accepts exactly the vendor's groups, and no error finding.
func ownedFamilies(pending []requirements.Finding, owned []string) map[string][]requirements.Finding {
	domains := map[string]bool{}
	for _, g := range owned {
		labels := strings.Split(g, ".")
		if len(labels) < 2 {
			continue
		}
		d := strings.Join(labels[len(labels)-2:], ".")
		if !sharedDomains[d] {
			domains[d] = true
		}
	}
	out := map[string][]requirements.Finding{}
	for d := range domains {
		var fs []requirements.Finding
		sameSeverity := true
		for _, f := range pending {
			if f.Category != requirements.API || !strings.HasSuffix(f.Subject, "."+d) {
				continue
			}
			sameSeverity = sameSeverity && f.Severity == requirements.Warning
			fs = append(fs, f)
		}
		if len(fs) >= 2 && sameSeverity {
			out[d] = fs
		}
	}
	return out
}

// sharedDomains are API-group domains many unrelated projects use: a glob
// over one would accept other vendors' APIs.
var sharedDomains = map[string]bool{
	"k8s.io": true, "x-k8s.io": true, "kubernetes.io": true, "openshift.io": true, "coreos.com": true,
	"operatorframework.io": true, "cncf.io": true, "github.io": true, "github.com": true, "redhat.com": true,
	"example.com": true, "istio.io": true, "knative.dev": true,
}

// template is a finding's message with its subject as <group>, so that
// findings saying the same thing of different groups share one comment.
func template(f requirements.Finding) string {
	return strings.ReplaceAll(f.Message, f.Subject, "<group>")
}

// quote is the comment lines quoting a finding: what it is, where from,
// the message and the fix.
func quote(f requirements.Finding) []string {
	return []string{
		echo.Text(fmt.Sprintf("%s %s (from %s): %q", f.Severity, f.Key(), firstSource(f.Source), f.Message)),
		"fix: " + echo.Text(f.Fix),
	}
}

// firstSource is the first place a merged finding's source names, and how
// many more it names ("N more" counted in).
func firstSource(s string) string {
	items := strings.Split(s, "; ")
	more := len(items) - 1
	if n, err := strconv.Atoi(strings.TrimSuffix(items[len(items)-1], " more")); err == nil && more > 0 {
		more += n - 1
	}
	if more > 0 {
		return fmt.Sprintf("%s and %d more", items[0], more)
	}
	return items[0]
}

func isOpenShift(group string) bool {
	return group == "openshift.io" || strings.HasSuffix(group, ".openshift.io")
}

// isAPIName reports whether s reads as clusterAPIs takes it: a group or
// group/version.
func isAPIName(s string) bool {
	group, version, hasVersion := strings.Cut(s, "/")
	if len(validation.IsDNS1123Subdomain(group)) > 0 || !strings.Contains(group, ".") {
		return false
	}
	return !hasVersion || len(validation.IsDNS1123Label(version)) == 0
}

var nonLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9-]+`) })

// dnsLabel makes s a DNS label: lower case, other characters as '-', at
// most 63 characters; "" when nothing is left.
func dnsLabel(s string) string {
	s = nonLabel().ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > validation.DNS1123LabelMaxLength {
		s = s[:validation.DNS1123LabelMaxLength]
	}
	return strings.Trim(s, "-")
}
