package versions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// fbc builds a one-file catalog from objects (each marshalled as one JSON
// value, as opm writes them).
func fbc(t testing.TB, objects ...any) fstest.MapFS {
	t.Helper()
	var b strings.Builder
	for _, o := range objects {
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return fstest.MapFS{"catalog.json": {Data: []byte(b.String())}}
}

type obj = map[string]any

func pkgObj(name, def string) obj {
	return obj{"schema": "olm.package", "name": name, "defaultChannel": def}
}

func bundleObj(pkg, name, version string) obj {
	return obj{"schema": "olm.bundle", "package": pkg, "name": name, "image": "quay.io/org/" + name,
		"properties": []obj{{"type": "olm.package", "value": obj{"packageName": pkg, "version": version}}}}
}

// chanObj takes entries as "name", "name<replaced", "name<replaced|skip1,skip2|range".
func chanObj(pkg, name string, entries ...string) obj {
	var es []obj
	for _, e := range entries {
		n, rest, _ := strings.Cut(e, "<")
		parts := strings.Split(rest, "|")
		o := obj{"name": n}
		if parts[0] != "" {
			o["replaces"] = parts[0]
		}
		if len(parts) > 1 && parts[1] != "" {
			o["skips"] = strings.Split(parts[1], ",")
		}
		if len(parts) > 2 && parts[2] != "" {
			o["skipRange"] = parts[2]
		}
		es = append(es, o)
	}
	return obj{"schema": "olm.channel", "package": pkg, "name": name, "entries": es}
}

func deprecations(pkg string, refs ...obj) obj {
	var es []obj
	for _, r := range refs {
		es = append(es, obj{"reference": r, "message": "deprecated"})
	}
	return obj{"schema": "olm.deprecations", "package": pkg, "entries": es}
}

// widget: stable 1.0.0 → 1.1.0 → 1.2.0 (skips 1.1.0 too, and skipRange
// <1.2.0), 1.3.0 replaces 1.2.0; fast also has 2.0.0-rc.1, replacing
// 1.3.0; 1.1.0 is deprecated; channel candidate is deprecated.
func widget(t testing.TB) fstest.MapFS {
	return fbc(t,
		pkgObj("widget", "stable"),
		bundleObj("widget", "widget.v1.0.0", "1.0.0"),
		bundleObj("widget", "widget.v1.1.0", "1.1.0"),
		bundleObj("widget", "widget.v1.2.0", "1.2.0"),
		bundleObj("widget", "widget.v1.3.0", "1.3.0"),
		bundleObj("widget", "widget.v2.0.0-rc.1", "2.0.0-rc.1"),
		chanObj("widget", "stable", "widget.v1.3.0<widget.v1.2.0", "widget.v1.0.0", "widget.v1.1.0<widget.v1.0.0", "widget.v1.2.0<widget.v1.1.0|widget.v1.1.0|>=1.0.0 <1.2.0"),
		chanObj("widget", "fast", "widget.v1.2.0", "widget.v1.3.0<widget.v1.2.0", "widget.v2.0.0-rc.1<widget.v1.3.0|widget.v1.0.0"),
		chanObj("widget", "candidate", "widget.v1.0.0"),
		deprecations("widget", obj{"schema": "olm.bundle", "name": "widget.v1.1.0"}, obj{"schema": "olm.channel", "name": "candidate"}),
	)
}

func names(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return strings.Join(out, " ")
}

func TestReadPackage(t *testing.T) {
	p, err := ReadPackage(context.Background(), widget(t), "widget")
	if err != nil {
		t.Fatal(err)
	}
	if p.DefaultChannel != "stable" || p.Deprecated {
		t.Errorf("package: default %q deprecated %v", p.DefaultChannel, p.Deprecated)
	}
	var got []string
	for _, c := range p.Channels {
		got = append(got, fmt.Sprintf("%s head=%s deprecated=%v [%s] %s", c.Name, c.Head, c.Deprecated, names(c.Entries), c.Problem))
	}
	want := []string{
		"candidate head=widget.v1.0.0 deprecated=true [widget.v1.0.0] ",
		"fast head=widget.v2.0.0-rc.1 deprecated=false [widget.v1.2.0 widget.v1.3.0 widget.v2.0.0-rc.1] ",
		"stable head=widget.v1.3.0 deprecated=false [widget.v1.0.0 widget.v1.1.0 widget.v1.2.0 widget.v1.3.0] ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("channels:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	e := p.Channel("stable").Entries[2]
	if e.Name != "widget.v1.2.0" || e.Replaces != "widget.v1.1.0" || strings.Join(e.Skips, ",") != "widget.v1.1.0" || e.SkipRange != ">=1.0.0 <1.2.0" ||
		e.Image != "quay.io/org/widget.v1.2.0" || e.Version != "1.2.0" || strings.Join(e.Channels, ",") != "fast,stable" {
		t.Errorf("entry: %+v", e)
	}
	if d := p.Channel("stable").Entries[1]; d.Name != "widget.v1.1.0" || !d.Deprecated {
		t.Errorf("deprecated bundle: %+v", d)
	}
}

func TestReadPackageDeprecatedPackage(t *testing.T) {
	fsys := fbc(t, pkgObj("p", ""), bundleObj("p", "p.v1", "1.0.0"), chanObj("p", "a", "p.v1"),
		deprecations("p", obj{"schema": "olm.package"}))
	p, err := ReadPackage(context.Background(), fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Deprecated || p.Channels[0].Deprecated {
		t.Errorf("package deprecated %v, channel deprecated %v", p.Deprecated, p.Channels[0].Deprecated)
	}
}

func TestReadPackageMissing(t *testing.T) {
	_, err := ReadPackage(context.Background(), widget(t), "gadget")
	if err == nil || !strings.Contains(err.Error(), `package "gadget" not found; the catalog's packages: widget`) {
		t.Errorf("err = %v", err)
	}
}

func TestHeadsCycleAndMany(t *testing.T) {
	fsys := fbc(t, pkgObj("p", "loop"),
		bundleObj("p", "p.a", "1.0.0"), bundleObj("p", "p.b", "1.1.0"), bundleObj("p", "p.c", "1.2.0"),
		chanObj("p", "loop", "p.a<p.c", "p.b<p.a", "p.c<p.b"),
		chanObj("p", "two", "p.a", "p.b", "p.c<p.a"),
	)
	p, err := ReadPackage(context.Background(), fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Channel("loop"); c.Head != "" || !strings.Contains(c.Problem, "no head") {
		t.Errorf("loop: head %q problem %q", c.Head, c.Problem)
	}
	if c := p.Channel("two"); c.Head != "" || !strings.HasPrefix(c.Problem, "2 heads (p.b, p.c)") {
		t.Errorf("two: head %q problem %q", c.Head, c.Problem)
	}
	// One hop is all the successor rules take: a cycle ends nothing.
	s, err := SuccessorsOLMv1(p, "p.c", []string{"loop"}, "")
	if err != nil || names(s) != "p.a" {
		t.Errorf("successors in a cycle: %q, %v", names(s), err)
	}
	if next, ok := NextOLMv0(p, "p.a", "loop"); !ok || next.Name != "p.b" {
		t.Errorf("next in a cycle: %v %v", next.Name, ok)
	}
}
