package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/editdist"
)

// withSuggestions makes a mistyped command or flag one line with a "did you
// mean", the way a mistyped spec key is answered. cobra's own suggestion
// is a block ("Did you mean this?" and a tab-indented name) that the
// one-line error printer would show with a literal \t, and pflag suggests
// nothing for flags.
func withSuggestions(root *cobra.Command) {
	root.DisableSuggestions = true
	// Children without their own flag error function use their parent's.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var ne *pflag.NotExistError
		if !errors.As(err, &ne) {
			return err
		}
		names := flagNames(c)
		if group := ne.GetSpecifiedShortnames(); group != "" {
			// -namespace: one dash before a long name.
			if best := closest(group, names); len(group) > 1 && best != "" {
				return fmt.Errorf("unknown shorthand flag %q in -%s; did you mean --%s?", ne.GetSpecifiedName(), group, best)
			}
			return fmt.Errorf("unknown shorthand flag %q in -%s (%s --help lists the flags)", ne.GetSpecifiedName(), echo.Short(group), c.CommandPath())
		}
		name := echo.Short(ne.GetSpecifiedName()) // the user's: capped, escaped
		if best := closest(name, names); best != "" {
			return fmt.Errorf("unknown flag --%s; did you mean --%s?", name, best)
		}
		return fmt.Errorf("unknown flag --%s (%s --help lists the flags)", name, c.CommandPath())
	})
}

// unknownCommandPrefix opens cobra's error for an unknown subcommand of
// a command with subcommands: `unknown command "x" for "olm-cmp"`.
const unknownCommandPrefix = "unknown command "

// suggestCommand rewrites cobra's unknown-command error of root into one
// line naming the closest command; other errors are returned as they are.
func suggestCommand(root, cmd *cobra.Command, err error) error {
	if err == nil || cmd != root || !strings.HasPrefix(err.Error(), unknownCommandPrefix) {
		return err
	}
	typed, qerr := strconv.QuotedPrefix(strings.TrimPrefix(err.Error(), unknownCommandPrefix))
	if qerr != nil {
		return err
	}
	name, _ := strconv.Unquote(typed)
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if best := closest(name, names); best != "" {
		return fmt.Errorf("unknown command %s; did you mean %s?", typed, best)
	}
	return fmt.Errorf("unknown command %s (olm-cmp --help lists the commands)", typed)
}

// flagNames lists the long names of c's flags, its inherited ones too.
func flagNames(c *cobra.Command) []string {
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return names
}

// closest returns the name nearest to typed when it is near enough to be
// a typo (the spec keys' rule: at most 2 edits, or a quarter of the
// length), or a prefix of it; "" otherwise. Ties go to the first listed.
func closest(typed string, names []string) string {
	if n := editdist.Nearest(typed, names); n != "" {
		return n
	}
	for _, n := range names {
		if len(typed) >= 3 && strings.HasPrefix(n, typed) {
			return n
		}
	}
	return ""
}
