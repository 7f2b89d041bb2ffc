package validate

import (
	"strings"
	"testing"
)

// deployment is a valid Deployment with edit applied to its YAML (old ->
// new pairs).
func deployment(t *testing.T, edits ...string) string {
	t.Helper()
	d := `apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec:
  replicas: 1
  selector: {matchLabels: {app: op}}
  strategy: {type: RollingUpdate}
  template:
    metadata: {labels: {app: op}}
    spec:
      volumes: [{name: certs, secret: {secretName: op-certs}}]
      containers:
      - name: manager
        image: example.com/op:1
        ports: [{name: metrics, containerPort: 8443}]
        env: [{name: LOG_LEVEL, value: debug}]
        volumeMounts: [{name: certs, mountPath: /certs}]
        livenessProbe: {httpGet: {path: /healthz, port: 8081}}
        resources: {requests: {cpu: 100m}, limits: {cpu: 500m}}`
	return edit(t, d, edits...)
}

func edit(t *testing.T, doc string, edits ...string) string {
	t.Helper()
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(doc, edits[i]) {
			t.Fatalf("%q not in the object", edits[i])
		}
		doc = strings.Replace(doc, edits[i], edits[i+1], 1)
	}
	return doc
}

type kindCase struct {
	name, doc, want string
}

func runKindCases(t *testing.T, object string, cases []kindCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, c.doc)
			if c.want == "" {
				if got != "" {
					t.Errorf("refused: %s", got)
				}
				return
			}
			wantError(t, got, object+": "+c.want+": "+fixFile)
		})
	}
}

func TestDeploymentChecks(t *testing.T) {
	runKindCases(t, "Deployment ops/op", []kindCase{
		{"valid", deployment(t), ""},
		{"selector does not match template labels", deployment(t, "labels: {app: op}", "labels: {app: operator}"), "spec.template.metadata.labels: Invalid value \"app=operator\": `selector` does not match template `labels`"},
		{"empty selector", deployment(t, "selector: {matchLabels: {app: op}}", "selector: {}"), "spec.selector: Invalid value \"{}\": empty selector is invalid for deployment"},
		{"no selector", deployment(t, "  selector: {matchLabels: {app: op}}\n", ""), "spec.selector: Required value"},
		{"negative replicas", deployment(t, "replicas: 1", "replicas: -1"), "spec.replicas: Invalid value \"-1\": must be greater than or equal to 0"},
		{"a percentage with a leading zero, as the server reads it", deployment(t, "strategy: {type: RollingUpdate}", "strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 05%, maxUnavailable: 25%}}"), ""},
		{"a percentage over 100", deployment(t, "strategy: {type: RollingUpdate}", "strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 101%}}"), "spec.strategy.rollingUpdate.maxUnavailable: Invalid value \"101%\": must not be greater than 100%"},
		{"a rolling update that cannot move", deployment(t, "strategy: {type: RollingUpdate}", "strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0%}}"), "spec.strategy.rollingUpdate.maxUnavailable: Invalid value \"0%\": may not be 0 when `maxSurge` is 0"},
		{"recreate with rollingUpdate", deployment(t, "strategy: {type: RollingUpdate}", "strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}"), "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"},
		{"unknown strategy", deployment(t, "strategy: {type: RollingUpdate}", "strategy: {type: BlueGreen}"), "spec.strategy.type: Unsupported value \"BlueGreen\": supported values: \"Recreate\", \"RollingUpdate\""},
		{"progress deadline within minReadySeconds", deployment(t, "replicas: 1", "replicas: 1\n  minReadySeconds: 30\n  progressDeadlineSeconds: 30"), "spec.progressDeadlineSeconds: Invalid value \"30\": must be greater than minReadySeconds"},
		{"restartPolicy", deployment(t, "      volumes:", "      restartPolicy: OnFailure\n      volumes:"), "spec.template.spec.restartPolicy: Unsupported value \"OnFailure\": supported values: \"Always\""},
		{"activeDeadlineSeconds", deployment(t, "      volumes:", "      activeDeadlineSeconds: 60\n      volumes:"), "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"},
		{"no container", deployment(t, "      containers:\n      - name: manager\n        image: example.com/op:1\n        ports: [{name: metrics, containerPort: 8443}]\n        env: [{name: LOG_LEVEL, value: debug}]\n        volumeMounts: [{name: certs, mountPath: /certs}]\n        livenessProbe: {httpGet: {path: /healthz, port: 8081}}\n        resources: {requests: {cpu: 100m}, limits: {cpu: 500m}}", "      containers: []"), "spec.template.spec.containers: Required value"},
		{"no image", deployment(t, "        image: example.com/op:1\n", ""), "spec.template.spec.containers[0].image: Required value"},
		{"container name", deployment(t, "name: manager", "name: Manager_1"), "spec.template.spec.containers[0].name: Invalid value \"Manager_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc')"},
		{"two containers of one name", deployment(t, "      containers:\n", "      initContainers: [{name: manager, image: example.com/init:1}]\n      containers:\n"), "spec.template.spec.containers[0].name: Duplicate value \"manager\""},
		{"containerPort out of range", deployment(t, "containerPort: 8443", "containerPort: 84430"), "spec.template.spec.containers[0].ports[0].containerPort: Invalid value \"84430\": must be between 1 and 65535, inclusive"},
		{"port name too long", deployment(t, "name: metrics, containerPort", "name: metrics-https-port, containerPort"), "spec.template.spec.containers[0].ports[0].name: Invalid value \"metrics-https-port\": must be no more than 15 characters"},
		{"env name", deployment(t, "name: LOG_LEVEL", "name: LOG=LEVEL"), "spec.template.spec.containers[0].env[0].name: Invalid value \"LOG=LEVEL\": a valid environment variable name must consist only of printable ASCII characters other than '='"},
		{"mount of no volume", deployment(t, "{name: certs, mountPath", "{name: cert, mountPath"), "spec.template.spec.containers[0].volumeMounts[0].name: Not found \"cert\""},
		{"requests over limits", deployment(t, "requests: {cpu: 100m}", "requests: {cpu: \"1\"}"), "spec.template.spec.containers[0].resources.requests[cpu]: Invalid value \"1\": must be less than or equal to cpu limit of 500m"},
		{"probe without handler", deployment(t, "livenessProbe: {httpGet: {path: /healthz, port: 8081}}", "livenessProbe: {periodSeconds: 10}"), "spec.template.spec.containers[0].livenessProbe: Required value: must specify a handler type"},
		{"liveness succeeding twice", deployment(t, "port: 8081}}", "port: 8081}, successThreshold: 2}"), "spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value \"2\": must be 1"},
	})
}

func service(t *testing.T, edits ...string) string {
	t.Helper()
	return edit(t, `apiVersion: v1
kind: Service
metadata: {name: op-metrics, namespace: ops}
spec:
  selector: {app: op}
  ports:
  - {name: https, port: 8443, targetPort: metrics}
  - {name: http, port: 8080, targetPort: 8080}`, edits...)
}

func TestServiceChecks(t *testing.T) {
	runKindCases(t, "Service ops/op-metrics", []kindCase{
		{"valid", service(t), ""},
		{"headless without ports", service(t, "  ports:\n  - {name: https, port: 8443, targetPort: metrics}\n  - {name: http, port: 8080, targetPort: 8080}", "  clusterIP: None"), ""},
		{"no ports", service(t, "  ports:\n  - {name: https, port: 8443, targetPort: metrics}\n  - {name: http, port: 8080, targetPort: 8080}", "  type: ClusterIP"), "spec.ports: Required value"},
		{"two ports, one unnamed", service(t, "name: http, ", ""), "spec.ports[1].name: Required value"},
		{"port name", service(t, "name: https,", "name: HTTPS,"), "spec.ports[0].name: Invalid value \"HTTPS\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc')"},
		{"two ports of one name", service(t, "name: http,", "name: https,"), "spec.ports[1].name: Duplicate value \"https\""},
		{"port out of range", service(t, "port: 8443,", "port: 0,"), "spec.ports[0].port: Invalid value \"0\": must be between 1 and 65535, inclusive"},
		{"one port and protocol twice", service(t, "port: 8080,", "port: 8443,"), "spec.ports[1]: Duplicate value \"8443/TCP\""},
		{"targetPort name", service(t, "targetPort: metrics", "targetPort: metrics_port"), "spec.ports[0].targetPort: Invalid value \"metrics_port\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"},
		{"nodePort on a ClusterIP Service", service(t, "port: 8080,", "port: 8080, nodePort: 30080,"), "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"},
		{"protocol", service(t, "port: 8080,", "port: 8080, protocol: HTTP,"), "spec.ports[1].protocol: Unsupported value \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""},
		{"type", service(t, "  selector:", "  type: Internal\n  selector:"), "spec.type: Unsupported value \"Internal\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""},
		{"selector label", service(t, "selector: {app: op}", "selector: {app: op!}"), "spec.selector: Invalid value \"op!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345')"},
	})
}

func webhookConfig(t *testing.T, kind string, edits ...string) string {
	t.Helper()
	return edit(t, `apiVersion: admissionregistration.k8s.io/v1
kind: `+kind+`
metadata: {name: op-webhook}
webhooks:
- name: vgreeter.greeter.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 10
  failurePolicy: Fail
  clientConfig:
    service: {name: op-webhook, namespace: ops, path: /validate, port: 443}
  rules:
  - {operations: [CREATE, UPDATE], apiGroups: [greeter.example.com], apiVersions: [v1alpha1], resources: [greeters]}`, edits...)
}

func TestWebhookChecks(t *testing.T) {
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		t.Run(kind, func(t *testing.T) {
			runKindCases(t, kind+" op-webhook", []kindCase{
				{"valid", webhookConfig(t, kind), ""},
				{"no sideEffects", webhookConfig(t, kind, "  sideEffects: None\n", ""), "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"},
				{"sideEffects Some", webhookConfig(t, kind, "sideEffects: None", "sideEffects: Some"), "webhooks[0].sideEffects: Unsupported value \"Some\": supported values: \"None\", \"NoneOnDryRun\""},
				{"timeout over 30", webhookConfig(t, kind, "timeoutSeconds: 10", "timeoutSeconds: 31"), "webhooks[0].timeoutSeconds: Invalid value \"31\": the timeout value must be between 1 and 30 seconds"},
				{"timeout 0", webhookConfig(t, kind, "timeoutSeconds: 10", "timeoutSeconds: 0"), "webhooks[0].timeoutSeconds: Invalid value \"0\": the timeout value must be between 1 and 30 seconds"},
				{"no admissionReviewVersions", webhookConfig(t, kind, "  admissionReviewVersions: [v1]\n", ""), "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"},
				{"no known admissionReviewVersion", webhookConfig(t, kind, "admissionReviewVersions: [v1]", "admissionReviewVersions: [v2]"), "webhooks[0].admissionReviewVersions: Invalid value \"v2\": must include at least one of v1, v1beta1"},
				{"name not fully qualified", webhookConfig(t, kind, "name: vgreeter.greeter.example.com", "name: vgreeter"), "webhooks[0].name: Invalid value \"vgreeter\": should be a domain with at least three segments separated by dots"},
				{"two webhooks of one name", webhookConfig(t, kind, "webhooks:\n", "webhooks:\n- name: vgreeter.greeter.example.com\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  clientConfig: {url: \"https://hook.example.com/x\"}\n"), "webhooks[1].name: Duplicate value \"vgreeter.greeter.example.com\""},
				{"url and service", webhookConfig(t, kind, "    service:", "    url: https://hook.example.com/validate\n    service:"), "webhooks[0].clientConfig: Required value: exactly one of url or service is required"},
				{"service without namespace", webhookConfig(t, kind, "namespace: ops, ", ""), "webhooks[0].clientConfig.service.namespace: Required value"},
				{"service port", webhookConfig(t, kind, "port: 443}", "port: 0}"), "webhooks[0].clientConfig.service.port: Invalid value \"0\": port is not valid: must be between 1 and 65535, inclusive"},
				{"url over http", webhookConfig(t, kind, "    service: {name: op-webhook, namespace: ops, path: /validate, port: 443}", "    url: http://hook.example.com/validate"), "webhooks[0].clientConfig.url: Invalid value \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"},
				{"failurePolicy", webhookConfig(t, kind, "failurePolicy: Fail", "failurePolicy: Retry"), "webhooks[0].failurePolicy: Unsupported value \"Retry\": supported values: \"Fail\", \"Ignore\""},
				{"rule without operations", webhookConfig(t, kind, "operations: [CREATE, UPDATE], ", ""), "webhooks[0].rules[0].operations: Required value"},
				{"rule operation", webhookConfig(t, kind, "operations: [CREATE, UPDATE]", "operations: [CREATE, PATCH]"), "webhooks[0].rules[0].operations[1]: Unsupported value \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\""},
			})
		})
	}
}

func TestRBACChecks(t *testing.T) {
	role := func(kind, rules string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\nmetadata: {name: op, namespace: ops}\nrules:\n" + rules
	}
	binding := func(kind, ref, subjects string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\nmetadata: {name: op, namespace: ops}\nroleRef: " + ref + "\nsubjects: " + subjects
	}
	const sa = "[{kind: ServiceAccount, name: op, namespace: ops}]"
	runKindCases(t, "Role ops/op", []kindCase{
		{"valid", role("Role", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}"), ""},
		{"rule without verbs", role("Role", "- {apiGroups: [\"\"], resources: [configmaps], verbs: []}"), "rules[0].verbs: Required value: verbs must contain at least one value"},
		{"resource rule without apiGroups", role("Role", "- {resources: [configmaps], verbs: [get]}"), "rules[0].apiGroups: Required value: resource rules must supply at least one api group"},
		{"resource rule without resources", role("Role", "- {apiGroups: [\"\"], verbs: [get]}"), "rules[0].resources: Required value: resource rules must supply at least one resource"},
		{"non-resource URLs in a Role", role("Role", "- {nonResourceURLs: [/metrics], verbs: [get]}"), "rules[0].nonResourceURLs: Invalid value \"/metrics\": namespaced rules cannot apply to non-resource URLs"},
	})
	runKindCases(t, "ClusterRole op", []kindCase{
		{"non-resource URLs", strings.Replace(role("ClusterRole", "- {nonResourceURLs: [/metrics], verbs: [get]}"), ", namespace: ops", "", 1), ""},
		{"non-resource URLs and resources", strings.Replace(role("ClusterRole", "- {nonResourceURLs: [/metrics], resources: [pods], verbs: [get]}"), ", namespace: ops", "", 1), "rules[0].nonResourceURLs: Invalid value \"/metrics\": rules cannot apply to both regular resources and non-resource URLs"},
		{"aggregation without selectors", strings.Replace(role("ClusterRole", "- {apiGroups: [\"\"], resources: [pods], verbs: [get]}\naggregationRule: {clusterRoleSelectors: []}"), ", namespace: ops", "", 1), "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"},
	})
	runKindCases(t, "RoleBinding ops/op", []kindCase{
		{"valid, apiGroups defaulted", binding("RoleBinding", "{kind: Role, name: op}", "[{kind: ServiceAccount, name: op, namespace: ops}, {kind: User, name: jane}, {kind: Group, name: devs}]"), ""},
		{"roleRef kind", binding("RoleBinding", "{apiGroup: rbac.authorization.k8s.io, kind: ServiceAccount, name: op}", sa), "roleRef.kind: Unsupported value \"ServiceAccount\": supported values: \"Role\", \"ClusterRole\""},
		{"roleRef apiGroup", binding("RoleBinding", "{apiGroup: rbac, kind: Role, name: op}", sa), "roleRef.apiGroup: Unsupported value \"rbac\": supported values: \"rbac.authorization.k8s.io\""},
		{"roleRef without name", binding("RoleBinding", "{kind: Role}", sa), "roleRef.name: Required value"},
		{"subject kind", binding("RoleBinding", "{kind: Role, name: op}", "[{kind: Serviceaccount, name: op}]"), "subjects[0].kind: Unsupported value \"Serviceaccount\": supported values: \"ServiceAccount\", \"User\", \"Group\""},
		{"service account subject apiGroup", binding("RoleBinding", "{kind: Role, name: op}", "[{kind: ServiceAccount, apiGroup: rbac.authorization.k8s.io, name: op}]"), "subjects[0].apiGroup: Unsupported value \"rbac.authorization.k8s.io\": supported values: \"\""},
	})
	runKindCases(t, "ClusterRoleBinding op", []kindCase{
		{"roleRef to a Role", strings.Replace(binding("ClusterRoleBinding", "{kind: Role, name: op}", sa), ", namespace: ops}\nroleRef", "}\nroleRef", 1), "roleRef.kind: Unsupported value \"Role\": supported values: \"ClusterRole\""},
		{"service account without namespace", strings.Replace(binding("ClusterRoleBinding", "{kind: ClusterRole, name: op}", "[{kind: ServiceAccount, name: op}]"), ", namespace: ops}\nroleRef", "}\nroleRef", 1), "subjects[0].namespace: Required value"},
	})
}

func TestConfigMapAndSecretChecks(t *testing.T) {
	runKindCases(t, "ConfigMap ops/c", []kindCase{
		{"valid", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ops}\ndata: {config.yaml: x}\nbinaryData: {logo.png: aGk=}", ""},
		{"key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ops}\ndata: {config/yaml: x}", "data[config/yaml]: Invalid value \"config/yaml\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name')"},
		{"key in data and binaryData", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ops}\ndata: {a: x}\nbinaryData: {a: aGk=}", "data[a]: Invalid value \"a\": duplicate of key present in binaryData; binaryData[a]: Invalid value \"a\": duplicate of key present in data"},
		{"over 1 MiB", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ops}\ndata: {a: " + strings.Repeat("x", 1<<20) + ", b: x}", "data: Invalid value \"1048577 bytes\": may not be more than 1048576 bytes in all"},
	})
	runKindCases(t, "Secret ops/s", []kindCase{
		{"valid TLS", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ops}\ntype: kubernetes.io/tls\nstringData: {tls.crt: c, tls.key: k}", ""},
		{"TLS without its key", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ops}\ntype: kubernetes.io/tls\nstringData: {tls.crt: c}", "data[tls.key]: Required value"},
		{"service account token without its account", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ops}\ntype: kubernetes.io/service-account-token", "metadata.annotations[kubernetes.io/service-account.name]: Required value"},
		{"key", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ops}\nstringData: {\"a key\": x}", "stringData[a key]: Invalid value \"a key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name')"},
	})
	// A docker config that is not JSON: its text never reaches the line.
	got := run(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ops}\ntype: kubernetes.io/dockerconfigjson\nstringData: {.dockerconfigjson: 'hunter2-password'}")
	wantError(t, got, `Secret ops/s: stringData[.dockerconfigjson]: Invalid value "(not repeated: a credential)": must be a JSON object: `+fixFile)
	if strings.Contains(got, "hunter2") {
		t.Errorf("the credential reached the line: %s", got)
	}
}
