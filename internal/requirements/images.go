package requirements

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/transform"
)

// credentialedRegistries need a login to pull from, even for public content.
var credentialedRegistries = []string{
	"registry.redhat.io",          // Red Hat's products: a Red Hat account's pull secret
	"registry.connect.redhat.com", // Red Hat certified partners: the same pull secret
	"registry.stage.redhat.io",    // Red Hat's staging registry
	"brew.registry.redhat.io",     // Red Hat's internal build registry
	"cp.icr.io",                   // IBM's entitled registry: an entitlement key
}

func needsCredentials(host string) bool {
	return slices.Contains(credentialedRegistries, host)
}

// podSpecPaths are where each workload kind keeps its pod spec.
var podSpecPaths = map[string][]string{
	"Deployment":  {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":         {"spec"},
}

// imageUse is one place an image is named.
type imageUse struct {
	ref, source string
	// pullSecrets is whether whatever pulls it has imagePullSecrets; nil
	// when not known (an operand image: the operator picks its SA later).
	pullSecrets *bool
}

// imageFindings checks every image of the rendered workloads (containers,
// init containers, RELATED_IMAGE_* env values the operator hands its
// operands) and of the CSV's relatedImages, as spec.images rewrites them.
func imageFindings(in Input) []Finding {
	var uses []imageUse
	saSecrets := serviceAccountsWithPullSecrets(in.Objects)
	for _, n := range in.Objects {
		path := podSpecPaths[n.GetKind()]
		if path == nil {
			continue
		}
		ps, _ := n.Pipe(yaml.Lookup(path...))
		if ps == nil {
			continue
		}
		sa := str(ps, "serviceAccountName")
		if sa == "" {
			sa = "default"
		}
		has := saSecrets[sa] || hasList(ps, "imagePullSecrets")
		for _, list := range []string{"initContainers", "containers"} {
			cs, _ := ps.Pipe(yaml.Lookup(list))
			if cs == nil {
				continue
			}
			_ = cs.VisitElements(func(c *yaml.RNode) error {
				cname := str(c, "name")
				where := fmt.Sprintf("%s %s %s", objectName(n), strings.TrimSuffix(list, "s"), cname)
				if img := c.Field("image"); img != nil {
					uses = append(uses, imageUse{yaml.GetValue(img.Value), where, &has})
				}
				env, _ := c.Pipe(yaml.Lookup("env"))
				if env == nil {
					return nil
				}
				return env.VisitElements(func(e *yaml.RNode) error {
					ename := str(e, "name")
					if v := e.Field("value"); v != nil && strings.HasPrefix(ename, "RELATED_IMAGE_") {
						uses = append(uses, imageUse{yaml.GetValue(v.Value), where + " env " + ename, nil})
					}
					return nil
				})
			})
		}
	}
	for _, r := range relatedImages(in) {
		uses = append(uses, imageUse{r[1], "CSV relatedImages " + r[0], nil})
	}
	var out []Finding
	for _, u := range uses {
		out = append(out, checkImage(u, len(in.Spec.ImagePullSecrets) > 0)...)
	}
	return out
}

// serviceAccountsWithPullSecrets names the rendered ServiceAccounts that
// carry imagePullSecrets.
func serviceAccountsWithPullSecrets(objs []*yaml.RNode) map[string]bool {
	out := map[string]bool{}
	for _, n := range objs {
		if n.GetKind() == "ServiceAccount" && n.GetApiVersion() == "v1" && hasList(n, "imagePullSecrets") {
			out[n.GetName()] = true
		}
	}
	return out
}

func hasList(n *yaml.RNode, field string) bool {
	f := n.Field(field)
	return f != nil && f.Value.YNode().Kind == yaml.SequenceNode && len(f.Value.Content()) > 0
}

// relatedImages returns the CSV's relatedImages (name, image) as spec.images
// rewrites them. The pipeline does not render relatedImages, so the rewrite is
// applied here, with the pipeline's own filter on a scratch Pod (one container
// per image), so both agree on what a prefix matches.
func relatedImages(in Input) [][2]string {
	if in.Bundle == nil || in.Bundle.CSV == nil {
		return nil
	}
	var out [][2]string
	pod := yaml.MustParse("apiVersion: v1\nkind: Pod\nmetadata: {name: related-images}\nspec: {containers: []}\n")
	cs, _ := pod.Pipe(yaml.Lookup("spec", "containers"))
	for _, r := range in.Bundle.CSV.Spec.RelatedImages {
		c := yaml.NewMapRNode(nil)
		_ = c.PipeE(yaml.SetField("name", yaml.NewStringRNode(r.Name)))
		_ = c.PipeE(yaml.SetField("image", yaml.NewStringRNode(r.Image)))
		cs.YNode().Content = append(cs.YNode().Content, c.YNode())
	}
	if _, err := transform.Images(in.Spec.Images).Filter([]*yaml.RNode{pod}); err != nil {
		return nil
	}
	for i, c := range cs.Content() {
		out = append(out, [2]string{in.Bundle.CSV.Spec.RelatedImages[i].Name, str(yaml.NewRNode(c), "image")})
	}
	return out
}

// fixImages is the advice for an image that cannot be pulled as written.
const fixImages = "rewrite it with spec.images (a prefix or the whole reference → a pullable reference, pinned by digest)"

// checkImage judges one image reference: at most one finding, its problems
// (no registry host, no tag, credentials) joined in one message, so the
// report has one finding per image.
func checkImage(u imageUse, specSecrets bool) []Finding {
	f := func(sev Severity, msg, fix string) Finding {
		return Finding{Category: Image, Subject: u.ref, Source: u.source, Severity: sev, Message: msg, Fix: fix}
	}
	ref := strings.TrimSpace(u.ref)
	if ref == "" {
		return []Finding{f(Required, "empty image reference", fixImages)}
	}
	if strings.Contains(ref, "${") || strings.Contains(ref, "$(") || strings.Contains(ref, "{{") || strings.ContainsAny(ref, "<> ") {
		return []Finding{f(Required, "a placeholder, not an image: the bundle's build substitutes it, this bundle was not", fixImages)}
	}
	parsed, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		// Strict parsing fails on no tag/digest too: try again to tell
		// "untagged" from "not a reference at all".
		if parsed, err = name.ParseReference(ref); err != nil {
			return []Finding{f(Required, "not a valid image reference", fixImages)}
		}
	}
	var msgs, fixes []string
	if !hasRegistryHost(ref) {
		msgs, fixes = append(msgs, "no registry host: a short name resolves to docker.io, or per node configuration"), append(fixes, fixImages)
	}
	if _, isDigest := parsed.(name.Digest); !isDigest {
		// An untagged reference parses as :latest.
		if parsed.(name.Tag).TagStr() == "latest" {
			msgs, fixes = append(msgs, "tag latest or no tag, and no digest: what runs changes without a change in Git"), append(fixes, fixImages)
		}
	}
	host := parsed.Context().RegistryStr()
	if needsCredentials(host) {
		missing := (u.pullSecrets != nil && !*u.pullSecrets) || (u.pullSecrets == nil && !specSecrets)
		if missing {
			msg := fmt.Sprintf("%s needs credentials, and the ServiceAccount that pulls it has no imagePullSecrets", host)
			if u.pullSecrets == nil {
				msg = fmt.Sprintf("%s needs credentials, and spec.imagePullSecrets is empty (the operator's operands pull it)", host)
			}
			msgs = append(msgs, msg)
			fixes = append(fixes, "create a pull secret for "+host+" in the install namespace and name it in spec.imagePullSecrets (operand ServiceAccounts in spec.serviceAccounts), or mirror it with spec.images")
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return []Finding{f(Warning, strings.Join(msgs, "; "), strings.Join(slices.Compact(fixes), "; "))}
}

// hasRegistryHost is the docker rule: the first path component names a
// registry when it has a "." or ":" or is localhost.
func hasRegistryHost(ref string) bool {
	first, _, found := strings.Cut(ref, "/")
	return found && (strings.ContainsAny(first, ".:") || first == "localhost")
}
