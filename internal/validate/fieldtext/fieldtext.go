// Package fieldtext words the API machinery's verdicts as olm-cmp's error
// lines say them: field errors without Go or JSON jargon, strict decoding
// errors as field problems, and metadata checked with the name rule of its
// kind. internal/validate and, in olm-cmp-check, internal/validate/apicheck
// both word problems with it, so a line reads the same whichever process
// found the problem. It stays light: apimachinery's validation only.
package fieldtext

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Metadata runs apimachinery's ObjectMeta validation with the name rule of
// gk. A namespace is never required: Argo CD puts a namespaced object
// without one in the Application's destination namespace.
func Metadata(meta metav1.Object, gk schema.GroupKind) []string {
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(meta, meta.GetNamespace() != "", nameRule(gk), field.NewPath("metadata"))
	return Lines(errs)
}

// nameRule is the API server's rule for the names of gk's objects: RBAC
// objects are path segments (any text without "/", "%", "." or ".."),
// Namespaces DNS-1123 labels, Services DNS-1035 labels (they become DNS
// names), and every other kind, custom resources included, a DNS-1123
// subdomain.
func nameRule(gk schema.GroupKind) apimachineryvalidation.ValidateNameFunc {
	switch gk.Group {
	case "rbac.authorization.k8s.io":
		switch gk.Kind {
		case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
			return path.ValidatePathSegmentName
		}
	case "":
		switch gk.Kind {
		case "Namespace":
			return apimachineryvalidation.ValidateNamespaceName
		case "Service":
			return apimachineryvalidation.NameIsDNS1035Label
		}
	}
	return apimachineryvalidation.NameIsDNSSubdomain
}

// Lines writes field errors without Go or JSON jargon, values capped, one
// problem per error.
func Lines(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		// The schema validator repeats the field and names the value's JSON
		// type as the bad value: `spec.replicas in body must be of type
		// integer: "string"` is said once, without the repetition. Within a
		// CRD's default the name is the path inside the default, or "".
		if name, detail, ok := strings.Cut(e.Detail, " in body "); ok && !strings.Contains(name, " ") {
			if name = strings.TrimPrefix(name, "."); name == "" || e.Field == name || strings.HasSuffix(e.Field, "."+name) {
				out = append(out, e.Field+": "+detail)
				continue
			}
		}
		s := e.Field + ": " + e.Type.String()
		// The server omits the value of an object or a list (a CEL rule's
		// failure on one), as the line does.
		if _, omit := e.BadValue.(field.OmitValueType); e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeForbidden && e.BadValue != nil && !omit {
			s += " " + badValue(e.BadValue)
		}
		if d := plainDetail(e.Detail); d != "" {
			s += ": " + d
		}
		out = append(out, s)
	}
	return out
}

// Cut keeps at most n of problems and says how many it left out ("and N
// more"), counting those a cut made before (olm-cmp-check cuts a verdict
// at apiop.MaxProblems lines, an error line cuts it again at a few): one
// rule for every cut, so the count stays true.
func Cut(problems []string, n int) []string {
	more := 0
	if last := len(problems) - 1; last >= 0 {
		if m, ok := moreCount(problems[last]); ok {
			problems, more = problems[:last], m
		}
	}
	if len(problems) > n {
		more += len(problems) - n
		problems = problems[:n:n]
	}
	if more == 0 {
		return problems
	}
	return append(problems[:len(problems):len(problems)], moreLine(more))
}

func moreLine(n int) string { return fmt.Sprintf("and %d more", n) }

// moreCount reads a line moreLine wrote. No problem reads so: each begins
// with the field or object it is about.
func moreCount(s string) (int, bool) {
	num, ok := strings.CutPrefix(s, "and ")
	if num, ok = strings.CutSuffix(num, " more"); !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || moreLine(n) != s {
		return 0, false
	}
	return n, true
}

// badValue writes a field error's value: text quoted, a list or an object
// (a duplicate item of a map list) as JSON, not as Go prints it.
func badValue(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		if b, err := json.Marshal(v); err == nil {
			return echo.Short(string(b))
		}
	}
	return echo.Quote(fmt.Sprint(v))
}

// validationRegex is the tail apimachinery's name and label messages end
// with: the rule is already said in words before it, and a raw regular
// expression helps no one fix a name.
var validationRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`,? ?regex used for validation is '[^']*'`) })

// plainDetail is a field error's detail without its regular expression
// ("(e.g. 'example.com', regex used for validation is '…')" keeps its example).
func plainDetail(d string) string {
	d = validationRegex().ReplaceAllString(d, "")
	return strings.ReplaceAll(d, " ()", "")
}

// Decode rewrites a decoder's error: each of a strict decoding error's
// problems (the object is decoded beside them), or the reason it could not
// be decoded. nil for no error.
func Decode(err error) []string {
	if err == nil {
		return nil
	}
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return []string{decodeProblem(err)}
	}
	var problems []string
	for _, e := range strict.Errors() {
		problems = append(problems, strictProblem(e))
	}
	return problems
}

// strictProblem rewrites one of the strict decoder's errors (`unknown field
// "spec.foo"`, `duplicate field "x"`) as a field problem.
func strictProblem(e error) string {
	msg := e.Error()
	for _, p := range []struct{ prefix, what string }{
		{"unknown field ", "unknown field: the API type has no such field, so the server would drop it or refuse the object"},
		{"duplicate field ", "duplicate field: set twice, the server would keep one"},
	} {
		if name, ok := strings.CutPrefix(msg, p.prefix); ok {
			if f, err := strconv.Unquote(name); err == nil {
				return f + ": " + p.what
			}
		}
	}
	return msg
}

var typeErr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^json: cannot unmarshal (.+) into Go (?:struct field \S*?\.(\S+)|value) of type (\S+)$`)
})

// decodeProblem rewrites a decoding error: a value of the wrong type names
// its field and what the API expects there, in JSON terms.
func decodeProblem(err error) string {
	msg := err.Error()
	m := typeErr().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	path := m[2]
	if path == "" {
		path = "the object"
	}
	return fmt.Sprintf("%s: a %s where the API expects %s", path, m[1], jsonKind(m[3]))
}

// jsonKind says what a Go type is in JSON terms.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]") && goType != "[]uint8":
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	case goType == "string" || goType == "[]uint8":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint") || strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.Contains(goType, "."):
		return "an object"
	}
	return goType
}
