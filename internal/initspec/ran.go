package initspec

import (
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/requirements"
)

// ranFacts is what running an operator from olm-cmp's render on a vanilla
// cluster showed it needs, where its bundle cannot say so: the requirements
// report sees an API group only in the operator's RBAC rules and can only
// say the operator may need it; these operators do, before their CR
// reconciles. Each fact is asserted by the e2e operators suite, which runs
// the operator (test/e2e/seeds_test.go); docs/olm-parity.md lists them for
// users. Keyed by the bundle's OLM package.
var ranFacts = map[string]ranFact{
	"leader-worker-set": {
		operator: "lws-operator",
		apis: []ranAPI{
			{"cert-manager.io/v1", "it creates a cert-manager Issuer and Certificates for its operand's webhooks (reporting Degraded/MissingDependency while cert-manager.io is not served) and applies its operand only once cert-manager has issued their Secrets: install cert-manager first"},
			{"monitoring.coreos.com/v1", "it applies a ServiceMonitor before its operand's Deployment and stops there while the API is not served: install the prometheus-operator CRDs first"},
		},
		authReader: "it stops at start (\"error initializing delegating authentication\") unless it may read kube-system's extension-apiserver-authentication ConfigMap, which this RoleBinding grants",
	},
}

type ranFact struct {
	operator   string   // what the package's operator is called
	apis       []ranAPI // clusterAPIs it needs served
	authReader string   // why it needs authReaderBinding ("" when it does not)
}

type ranAPI struct{ api, why string }

// AnswerRan is the pass before AnswerInstalls: for a package ranFacts knows,
// the RBAC-only findings of the APIs its operator was seen to need get a
// clusterAPIs entry saying why, and authReaderBinding is set when it reads
// the API server's authentication ConfigMap. pkg is the bundle's OLM package.
func (p *Plan) AnswerRan(pkg string, findings []requirements.Finding) {
	fact, ok := ranFacts[pkg]
	if !ok {
		return
	}
	var g Group
	for _, a := range fact.apis {
		group, _, _ := strings.Cut(a.api, "/")
		for _, f := range requirements.Pending(findings) {
			if f.Category == requirements.API && f.Subject == group {
				g.Entries = append(g.Entries, Entry{Value: a.api, Above: append(quote(f), "seen running "+fact.operator+": "+a.why),
					Trailing: TODO + " install what serves it before the first sync"})
				break
			}
		}
	}
	if len(g.Entries) > 0 {
		g.Header = []string{"APIs " + fact.operator + " needs served before its CR reconciles (docs/olm-parity.md, \"The seed operators on a vanilla cluster\")"}
		p.ClusterAPIs = append(p.ClusterAPIs, g)
	}
	if fact.authReader != "" {
		p.AuthReaderBinding = true
		p.authReaderNote = "seen running " + fact.operator + ": " + fact.authReader
	}
}
