package validate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// kindProblems runs the checks the API server's validation of a kind makes
// beyond its schema (k8s.io/kubernetes pkg/apis/<group>/validation, on
// create), for the kinds bundles ship: Deployments (and their pod
// templates), Services, admission webhook configurations, RBAC objects,
// ConfigMaps and Secrets. Only rules the server applies on create, after
// its v1 defaults, are here: a field it defaults is judged as defaulted.
// Labels, annotations and label selectors inside objects are nested.go's.
func kindProblems(obj any) field.ErrorList {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return deploymentProblems(o)
	case *corev1.Service:
		return serviceProblems(&o.Spec, field.NewPath("spec"))
	case *rbacv1.Role:
		return rulesProblems(o.Rules, true)
	case *rbacv1.ClusterRole:
		errs := rulesProblems(o.Rules, false)
		if o.AggregationRule != nil && len(o.AggregationRule.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(field.NewPath("aggregationRule", "clusterRoleSelectors"), "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		return errs
	case *rbacv1.RoleBinding:
		return bindingProblems(o.RoleRef, o.Subjects, true)
	case *rbacv1.ClusterRoleBinding:
		return bindingProblems(o.RoleRef, o.Subjects, false)
	case *corev1.ConfigMap:
		return configMapProblems(o)
	case *corev1.Secret:
		return secretProblems(o)
	}
	return nil
}

// deploymentProblems is apps' ValidateDeploymentSpec: a selector that
// selects the template's labels, counts that are not negative, a strategy
// that can roll, and the pod template of a controller (restartPolicy
// Always).
func deploymentProblems(d *appsv1.Deployment) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &d.Spec
	if s.Replicas != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*s.Replicas), spec.Child("replicas"))...)
	}
	switch {
	case s.Selector == nil:
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	case len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0:
		errs = append(errs, field.Invalid(spec.Child("selector"), "{}", "empty selector is invalid for deployment"))
	default:
		if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
			errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), labels.Set(s.Template.Labels).String(), "`selector` does not match template `labels`"))
		}
	}
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), spec.Child("minReadySeconds"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*s.RevisionHistoryLimit), spec.Child("revisionHistoryLimit"))...)
	}
	if s.ProgressDeadlineSeconds != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*s.ProgressDeadlineSeconds), spec.Child("progressDeadlineSeconds"))...)
		if *s.ProgressDeadlineSeconds <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(spec.Child("progressDeadlineSeconds"), *s.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	errs = append(errs, strategyProblems(&s.Strategy, spec.Child("strategy"))...)
	template := spec.Child("template", "spec")
	if p := s.Template.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(template.Child("restartPolicy"), p, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(template.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicaSet is not Supported"))
	}
	return append(errs, podProblems(&s.Template.Spec, template)...)
}

// strategyProblems: the type is one of two, Recreate takes no
// rollingUpdate, and a rolling update must be able to move (maxSurge and
// maxUnavailable are not both 0; each 25% when unset).
func strategyProblems(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType, "":
		if s.RollingUpdate == nil {
			break
		}
		quarter := intstr.FromString("25%")
		surge, unavailable := &quarter, &quarter
		if s.RollingUpdate.MaxSurge != nil {
			surge = s.RollingUpdate.MaxSurge
		}
		if s.RollingUpdate.MaxUnavailable != nil {
			unavailable = s.RollingUpdate.MaxUnavailable
		}
		errs = append(errs, intOrPercent(surge, p.Child("rollingUpdate", "maxSurge"))...)
		errs = append(errs, intOrPercent(unavailable, p.Child("rollingUpdate", "maxUnavailable"))...)
		if isZero(surge) && isZero(unavailable) {
			errs = append(errs, field.Invalid(p.Child("rollingUpdate", "maxUnavailable"), unavailable.String(), "may not be 0 when `maxSurge` is 0"))
		}
		if unavailable.Type == intstr.String && percent(unavailable) > 100 {
			errs = append(errs, field.Invalid(p.Child("rollingUpdate", "maxUnavailable"), unavailable.String(), "must not be greater than 100%"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	return errs
}

// intOrPercent: a non-negative number, or a percentage ("25%").
func intOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v.Type == intstr.Int {
		return apimachineryvalidation.ValidateNonnegativeField(int64(v.IntVal), p)
	}
	if percent(v) < 0 {
		return field.ErrorList{field.Invalid(p, v.StrVal, "must be an integer or percentage (e.g '5%')")}
	}
	return nil
}

// percent is a "N%" value's N, -1 when it is not one: the server's own
// format rule (utilvalidation.IsValidPercent, which takes "05%").
func percent(v *intstr.IntOrString) int {
	if len(utilvalidation.IsValidPercent(v.StrVal)) > 0 {
		return -1
	}
	i, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil { // too many digits for an int
		return -1
	}
	return i
}

func isZero(v *intstr.IntOrString) bool {
	return v.Type == intstr.Int && v.IntVal == 0 || v.Type == intstr.String && percent(v) == 0
}

// podProblems is the part of core's ValidatePodSpec a bundle's pod
// template can get wrong: at least one container; container names
// (DNS-1123 labels, unique among init and app containers) and images; ports
// (numbers, names, protocols); environment variable names; volumes (unique
// DNS-1123 label names) and the mounts that name them; requests within
// limits.
func podProblems(s *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes := map[string]bool{}
	for i, v := range s.Volumes {
		errs = append(errs, uniqueLabel(v.Name, p.Child("volumes").Index(i).Child("name"), volumes)...)
	}
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := map[string]bool{}
	for _, group := range []struct {
		name string
		list []corev1.Container
	}{{"initContainers", s.InitContainers}, {"containers", s.Containers}} {
		for i := range group.list {
			errs = append(errs, containerProblems(&group.list[i], p.Child(group.name).Index(i), names, volumes)...)
		}
	}
	if s.ServiceAccountName != "" {
		errs = append(errs, messages(apimachineryvalidation.NameIsDNSSubdomain(s.ServiceAccountName, false), p.Child("serviceAccountName"), s.ServiceAccountName)...)
	}
	if s.TerminationGracePeriodSeconds != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(*s.TerminationGracePeriodSeconds, p.Child("terminationGracePeriodSeconds"))...)
	}
	return errs
}

// probeProblems: a probe has exactly one handler (exec, httpGet,
// tcpSocket, grpc), and a liveness or startup probe succeeds once
// (successThreshold 1, its default).
func probeProblems(probe *corev1.Probe, p *field.Path, once bool) field.ErrorList {
	if probe == nil {
		return nil
	}
	var errs field.ErrorList
	h := probe.ProbeHandler
	switch n := btoi(h.Exec != nil) + btoi(h.HTTPGet != nil) + btoi(h.TCPSocket != nil) + btoi(h.GRPC != nil); {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a handler type"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 handler type"))
	}
	if once && probe.SuccessThreshold > 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return errs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// uniqueLabel: a name that is required, a DNS-1123 label, and not one of
// seen's (which it joins).
func uniqueLabel(name string, p *field.Path, seen map[string]bool) field.ErrorList {
	defer func() { seen[name] = true }()
	switch {
	case name == "":
		return field.ErrorList{field.Required(p, "")}
	case seen[name]:
		return field.ErrorList{field.Duplicate(p, name)}
	}
	return messages(utilvalidation.IsDNS1123Label(name), p, name)
}

var protocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}

func validProtocol(p corev1.Protocol) bool {
	return p == "" || p == corev1.ProtocolTCP || p == corev1.ProtocolUDP || p == corev1.ProtocolSCTP
}

func containerProblems(c *corev1.Container, p *field.Path, names, volumes map[string]bool) field.ErrorList {
	errs := uniqueLabel(c.Name, p.Child("name"), names)
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	for _, probe := range []struct {
		name string
		p    *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		errs = append(errs, probeProblems(probe.p, p.Child(probe.name), probe.name != "readinessProbe")...)
	}
	ports := map[string]bool{}
	for i, port := range c.Ports {
		pp := p.Child("ports").Index(i)
		if port.Name != "" {
			errs = append(errs, messages(utilvalidation.IsValidPortName(port.Name), pp.Child("name"), port.Name)...)
			if ports[port.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			ports[port.Name] = true
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else {
			errs = append(errs, messages(utilvalidation.IsValidPortNum(int(port.ContainerPort)), pp.Child("containerPort"), port.ContainerPort)...)
		}
		if port.HostPort != 0 {
			errs = append(errs, messages(utilvalidation.IsValidPortNum(int(port.HostPort)), pp.Child("hostPort"), port.HostPort)...)
		}
		if !validProtocol(port.Protocol) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, protocols))
		}
	}
	for i, env := range c.Env {
		ep := p.Child("env").Index(i)
		if env.Name == "" {
			errs = append(errs, field.Required(ep.Child("name"), ""))
		} else {
			errs = append(errs, messages(utilvalidation.IsRelaxedEnvVarName(env.Name), ep.Child("name"), env.Name)...)
		}
		if env.Value != "" && env.ValueFrom != nil {
			errs = append(errs, field.Invalid(ep.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
		}
	}
	mounts := map[string]bool{}
	for i, m := range c.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(mp.Child("name"), ""))
		} else if !volumes[m.Name] {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		} else if mounts[m.MountPath] {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mounts[m.MountPath] = true
	}
	for name, req := range c.Resources.Requests {
		if limit, ok := c.Resources.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(p.Child("resources", "requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}

// serviceProblems is core's ValidateService for what a bundle or an extra
// manifest writes: ports (required unless headless or ExternalName; named
// when more than one, names unique DNS-1123 labels; numbers; protocols;
// target ports; no nodePort on a ClusterIP Service; no port and protocol
// twice), the type and the selector's labels.
func serviceProblems(s *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	typ := s.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	switch typ {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	headless := s.ClusterIP == corev1.ClusterIPNone
	if len(s.Ports) == 0 && !headless && typ != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(p.Child("ports"), ""))
	}
	names := map[string]bool{}
	type portKey struct {
		port     int32
		protocol corev1.Protocol
	}
	seen := map[portKey]bool{}
	for i, port := range s.Ports {
		pp := p.Child("ports").Index(i)
		switch {
		case port.Name == "" && len(s.Ports) > 1:
			errs = append(errs, field.Required(pp.Child("name"), ""))
		case port.Name != "":
			errs = append(errs, messages(utilvalidation.IsDNS1123Label(port.Name), pp.Child("name"), port.Name)...)
			if names[port.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		errs = append(errs, messages(utilvalidation.IsValidPortNum(int(port.Port)), pp.Child("port"), port.Port)...)
		protocol := port.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		if !validProtocol(protocol) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, protocols))
		}
		switch t := port.TargetPort; {
		case t.Type == intstr.String && t.StrVal != "":
			errs = append(errs, messages(utilvalidation.IsValidPortName(t.StrVal), pp.Child("targetPort"), t.StrVal)...)
		case t.Type == intstr.Int && t.IntVal != 0:
			errs = append(errs, messages(utilvalidation.IsValidPortNum(int(t.IntVal)), pp.Child("targetPort"), t.IntVal)...)
		}
		if port.NodePort != 0 && typ == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Forbidden(pp.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
		k := portKey{port.Port, protocol}
		if seen[k] {
			errs = append(errs, field.Duplicate(pp, fmt.Sprintf("%d/%s", port.Port, protocol)))
		}
		seen[k] = true
	}
	return append(errs, metav1validation.ValidateLabels(s.Selector, p.Child("selector"))...)
}

// hook is what admissionregistration's validation reads of a validating
// or a mutating webhook (reinvocationPolicy: mutating only).
type hook struct {
	name           string
	clientConfig   admissionregistrationv1.WebhookClientConfig
	rules          []admissionregistrationv1.RuleWithOperations
	failurePolicy  *admissionregistrationv1.FailurePolicyType
	matchPolicy    *admissionregistrationv1.MatchPolicyType
	sideEffects    *admissionregistrationv1.SideEffectClass
	timeoutSeconds *int32
	reviewVersions []string
	reinvocation   *admissionregistrationv1.ReinvocationPolicyType
}

// webhooksOf is the webhooks of an admission webhook configuration, nil
// for another object.
func webhooksOf(obj any) []hook {
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		hooks := make([]hook, len(o.Webhooks))
		for i, w := range o.Webhooks {
			hooks[i] = hook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, nil}
		}
		return hooks
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		hooks := make([]hook, len(o.Webhooks))
		for i, w := range o.Webhooks {
			hooks[i] = hook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.ReinvocationPolicy}
		}
		return hooks
	}
	return nil
}

// webhookProblems is admissionregistration's validation of a webhook
// configuration on create: unique, fully qualified names; sideEffects None
// or NoneOnDryRun; admissionReviewVersions naming v1 or v1beta1;
// timeoutSeconds within 1..30; known policies; a client config of a URL or
// a service, not both, each as the server checks it (the apiserver's
// webhook rules, in olm-cmp-check: apicheck's webhook.go); rules with
// operations, groups, versions and resources.
func (v *validator) webhookProblems(what string, hooks []hook) ([]string, error) {
	var problems []string
	names := map[string]bool{}
	for i, h := range hooks {
		problems = append(problems, fieldtext.Lines(hookProblems(i, &h, names))...)
		if p := clientConfigJob(what, i, h.clientConfig); p.op != "" || p.err != nil {
			got, err := v.verdict(p)
			if err != nil {
				return nil, err
			}
			problems = append(problems, got...)
		}
	}
	return problems, nil
}

// clientConfigJob is the check of webhooks[i]'s clientConfig for
// olm-cmp-check, no job when it has neither a URL nor a service, or both
// (hookProblems says so).
func clientConfigJob(what string, i int, cc admissionregistrationv1.WebhookClientConfig) pending {
	in := apiop.WebhookInput{Index: i, URL: cc.URL}
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return pending{}
	case cc.Service != nil:
		port := int32(443) // v1's default
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		in.Service = &apiop.WebhookService{Namespace: cc.Service.Namespace, Name: cc.Service.Name, Path: cc.Service.Path, Port: port}
	}
	data, err := json.Marshal(in)
	if err != nil {
		return pending{err: err}
	}
	return pending{op: apiop.WebhookClientConfig, what: what, key: checkproc.KeyOf(apiop.WebhookClientConfig, data), load: func() ([]byte, error) { return data, nil }}
}

// hookProblems is webhooks[i]'s rules but its clientConfig's URL or
// service; names holds the webhooks' names so far.
func hookProblems(i int, h *hook, names map[string]bool) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("webhooks").Index(i)
	errs = append(errs, utilvalidation.IsFullyQualifiedName(p.Child("name"), h.name)...)
	if h.name != "" {
		if names[h.name] {
			errs = append(errs, field.Duplicate(p.Child("name"), h.name))
		}
		names[h.name] = true
	}
	for j, r := range h.rules {
		errs = append(errs, webhookRuleProblems(&r, p.Child("rules").Index(j))...)
	}
	if h.failurePolicy != nil && *h.failurePolicy != admissionregistrationv1.Ignore && *h.failurePolicy != admissionregistrationv1.Fail {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *h.failurePolicy, []string{"Fail", "Ignore"}))
	}
	if h.matchPolicy != nil && *h.matchPolicy != admissionregistrationv1.Exact && *h.matchPolicy != admissionregistrationv1.Equivalent {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *h.matchPolicy, []string{"Equivalent", "Exact"}))
	}
	switch {
	case h.sideEffects == nil:
		errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of None, NoneOnDryRun"))
	case *h.sideEffects != admissionregistrationv1.SideEffectClassNone && *h.sideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun:
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *h.sideEffects, []string{"None", "NoneOnDryRun"}))
	}
	if t := h.timeoutSeconds; t != nil && (*t < 1 || *t > 30) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	if r := h.reinvocation; r != nil && *r != admissionregistrationv1.NeverReinvocationPolicy && *r != admissionregistrationv1.IfNeededReinvocationPolicy {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *r, []string{"IfNeeded", "Never"}))
	}
	errs = append(errs, reviewVersionsProblems(h.reviewVersions, p.Child("admissionReviewVersions"))...)
	if (h.clientConfig.URL == nil) == (h.clientConfig.Service == nil) {
		errs = append(errs, field.Required(p.Child("clientConfig"), "exactly one of url or service is required"))
	}
	return errs
}

func reviewVersionsProblems(versions []string, p *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "must specify one of v1, v1beta1")}
	}
	var errs field.ErrorList
	seen, accepted := map[string]bool{}, false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		errs = append(errs, messages(utilvalidation.IsDNS1035Label(v), p.Index(i), v)...)
		accepted = accepted || v == "v1" || v == "v1beta1"
	}
	if !accepted {
		errs = append(errs, field.Invalid(p, strings.Join(versions, ", "), "must include at least one of v1, v1beta1"))
	}
	return errs
}

func webhookRuleProblems(r *admissionregistrationv1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	for i, op := range r.Operations {
		switch op {
		case admissionregistrationv1.OperationAll, admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete, admissionregistrationv1.Connect:
		default:
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), op, []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}))
		}
	}
	for _, list := range []struct {
		name   string
		values []string
	}{{"apiGroups", r.APIGroups}, {"apiVersions", r.APIVersions}, {"resources", r.Resources}} {
		if len(list.values) == 0 {
			errs = append(errs, field.Required(p.Child(list.name), ""))
		}
	}
	if r.Scope != nil {
		switch *r.Scope {
		case admissionregistrationv1.ClusterScope, admissionregistrationv1.NamespacedScope, admissionregistrationv1.AllScopes:
		default:
			errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, []string{"*", "Cluster", "Namespaced"}))
		}
	}
	return errs
}

// rulesProblems is rbac's ValidatePolicyRule: every rule has verbs; a
// resource rule names API groups and resources; a non-resource rule
// (nonResourceURLs) names nothing else and belongs to a ClusterRole.
func rulesProblems(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		p := field.NewPath("rules").Index(i)
		if len(r.Verbs) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(r.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), strings.Join(r.NonResourceURLs, ", "), "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), strings.Join(r.NonResourceURLs, ", "), "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(r.APIGroups) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(r.Resources) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// bindingProblems is rbac's ValidateRoleBinding and
// ValidateClusterRoleBinding, after v1's defaults (roleRef.apiGroup, and a
// User's or Group's apiGroup, default to rbac.authorization.k8s.io).
func bindingProblems(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	if ref.APIGroup != "" && ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(field.NewPath("roleRef", "apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if ref.Kind != "ClusterRole" && (!namespaced || ref.Kind != "Role") {
		errs = append(errs, field.NotSupported(field.NewPath("roleRef", "kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(field.NewPath("roleRef", "name"), ""))
	} else {
		errs = append(errs, messages(path.ValidatePathSegmentName(ref.Name, false), field.NewPath("roleRef", "name"), ref.Name)...)
	}
	for i, s := range subjects {
		p := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.Name != "" {
				errs = append(errs, messages(apimachineryvalidation.NameIsDNSSubdomain(s.Name, false), p.Child("name"), s.Name)...)
			}
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, field.Required(p.Child("namespace"), ""))
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup != "" && s.APIGroup != rbacv1.GroupName {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{"ServiceAccount", "User", "Group"}))
		}
	}
	return errs
}

// maxDataBytes is the API server's bound on a ConfigMap's or a Secret's
// data (core's MaxSecretSize, and the ConfigMap rule that shares it).
const maxDataBytes = 1 << 20

// configMapProblems is core's ValidateConfigMap: keys a file may be named
// by, none in both data and binaryData, 1 MiB in all.
func configMapProblems(c *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for k, v := range c.Data {
		errs = append(errs, messages(utilvalidation.IsConfigMapKey(k), field.NewPath("data").Key(k), k)...)
		if _, ok := c.BinaryData[k]; ok {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
		}
		size += len(v)
	}
	for k, v := range c.BinaryData {
		errs = append(errs, messages(utilvalidation.IsConfigMapKey(k), field.NewPath("binaryData").Key(k), k)...)
		if _, ok := c.Data[k]; ok {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of key present in data"))
		}
		size += len(v)
	}
	if size > maxDataBytes {
		errs = append(errs, tooBig(field.NewPath("data"), size))
	}
	return errs
}

// secretProblems is core's ValidateSecret: keys a file may be named by,
// 1 MiB in all, and the keys a secret's type requires.
func secretProblems(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	data := field.NewPath("data")
	size := 0
	has := map[string]bool{}
	for k, v := range s.Data {
		errs = append(errs, messages(utilvalidation.IsConfigMapKey(k), data.Key(k), k)...)
		size += len(v)
		has[k] = true
	}
	// stringData is merged into data before validation.
	for k, v := range s.StringData {
		errs = append(errs, messages(utilvalidation.IsConfigMapKey(k), field.NewPath("stringData").Key(k), k)...)
		size += len(v)
		has[k] = true
	}
	if size > maxDataBytes {
		errs = append(errs, tooBig(data, size))
	}
	require := func(keys ...string) {
		for _, k := range keys {
			if !has[k] {
				errs = append(errs, field.Required(data.Key(k), ""))
			}
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson:
		key := corev1.DockerConfigKey
		if s.Type == corev1.SecretTypeDockerConfigJson {
			key = corev1.DockerConfigJsonKey
		}
		require(key)
		// Never the value, nor the JSON error, which quotes it.
		if v, ok := s.Data[key]; ok && !jsonObject(v) {
			errs = append(errs, field.Invalid(data.Key(key), "(not repeated: a credential)", "must be a JSON object"))
		} else if v, ok := s.StringData[key]; ok && !jsonObject([]byte(v)) {
			errs = append(errs, field.Invalid(field.NewPath("stringData").Key(key), "(not repeated: a credential)", "must be a JSON object"))
		}
	case corev1.SecretTypeBasicAuth:
		if !has[corev1.BasicAuthUsernameKey] && !has[corev1.BasicAuthPasswordKey] {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""), field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		require(corev1.SSHAuthPrivateKey)
	case corev1.SecretTypeTLS:
		require(corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	return errs
}

func tooBig(p *field.Path, size int) *field.Error {
	return field.Invalid(p, fmt.Sprintf("%d bytes", size), fmt.Sprintf("may not be more than %d bytes in all", maxDataBytes))
}

func jsonObject(b []byte) bool {
	var m map[string]any
	return json.Unmarshal(b, &m) == nil
}

// messages turns the messages of one of apimachinery's Is* checks into
// field errors of p.
func messages(msgs []string, p *field.Path, value any) field.ErrorList {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(p, value, m))
	}
	return errs
}
