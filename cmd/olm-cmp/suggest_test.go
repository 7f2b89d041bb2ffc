package main

import (
	"bytes"
	"testing"
)

// TestMistypedCommandsAndFlags: a mistyped command or flag, of any command,
// is one line naming the closest one, with no tab or block from cobra; a
// name close to nothing points at --help.
func TestMistypedCommandsAndFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"renderr"}, `error: unknown command "renderr"; did you mean render?` + "\n"},
		{[]string{"ini"}, `error: unknown command "ini"; did you mean init?` + "\n"},
		{[]string{"xyzzy"}, `error: unknown command "xyzzy" (olm-cmp --help lists the commands)` + "\n"},
		{[]string{"render", "--namesapce", "x"}, "error: unknown flag --namesapce; did you mean --namespace?\n"},
		{[]string{"init", "--catalg", "x"}, "error: unknown flag --catalg; did you mean --catalog?\n"},
		{[]string{"versions", "--timout", "1s"}, "error: unknown flag --timout; did you mean --timeout?\n"},
		{[]string{"upgrade", "--wrte"}, "error: unknown flag --wrte; did you mean --write?\n"},
		{[]string{"serve", "--registry-confg", "x"}, "error: unknown flag --registry-confg; did you mean --registry-config?\n"},
		{[]string{"inspect", "--frobnicate"}, "error: unknown flag --frobnicate (olm-cmp inspect --help lists the flags)\n"},
		{[]string{"init", "-catalog", "x"}, `error: unknown shorthand flag "c" in -catalog; did you mean --catalog?` + "\n"},
		{[]string{"render", "-Z"}, `error: unknown shorthand flag "Z" in -Z (olm-cmp render --help lists the flags)` + "\n"},
		{[]string{"-Z"}, `error: unknown shorthand flag "Z" in -Z (olm-cmp --help lists the flags)` + "\n"},
		{[]string{"render", "--a\x1b[31mb"}, "error: unknown flag --a\\x1b[31mb (olm-cmp render --help lists the flags)\n"},
	} {
		root := newRootCmd()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(c.args)
		cmd, err := execute(root)
		code := exitStatus(cmd, err, &errOut)
		if code != 1 || out.String() != "" || errOut.String() != c.want {
			t.Errorf("olm-cmp %v: exit %d, stdout %q, stderr %q, want %q", c.args, code, out.String(), errOut.String(), c.want)
		}
	}
}
