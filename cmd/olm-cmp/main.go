// Command olm-cmp renders OLM registry+v1 operator bundles into plain,
// ordered Kubernetes manifests, as a CLI or as an Argo CD config-management
// plugin server.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// version is stamped at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	checkproc.StampVersion(version)
	cmd, err := execute(newRootCmd())
	os.Exit(exitStatus(cmd, err, os.Stderr))
}

// execute runs root with every command's RunE guarded by recoverPanics.
func execute(root *cobra.Command) (*cobra.Command, error) {
	guard(root)
	withSuggestions(root)
	cmd, err := root.ExecuteC()
	return cmd, suggestCommand(root, cmd, err)
}

// guard wraps the RunE of c and of every command under it in recoverPanics.
func guard(c *cobra.Command) {
	if c.RunE != nil {
		c.RunE = recoverPanics(c.RunE)
	}
	for _, sub := range c.Commands() {
		guard(sub)
	}
}

// recoverPanics turns a panic in a command into an *internalError, so the
// process exits with the command's failure status: Go's own exit status
// for a panic is 2, which diff documents as "a safety finding", and CI
// would read a crash as an unsafe bump. (A panic on another goroutine
// cannot be recovered here; the packages that start goroutines recover
// their own.)
func recoverPanics(run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = &internalError{command: cmd.Name(), value: r, stack: debug.Stack()}
			}
		}()
		return run(cmd, args)
	}
}

// EnvDebug, set to 1, makes a command's internal error print its stack
// trace on stderr, below the one-line message.
const EnvDebug = "OLM_CMP_DEBUG"

// internalError is a command's panic: a bug in olm-cmp, not the user's.
type internalError struct {
	command string
	value   any
	stack   []byte
}

func (e *internalError) Error() string {
	return fmt.Sprintf("internal error in olm-cmp %s: %s: please report it at %s with the olm-cmp version (olm-cmp version) and the input that caused it (%s=1 prints the stack trace)",
		e.command, echo.Short(fmt.Sprint(e.value)), issuesURL, EnvDebug)
}

// issuesURL is where bugs are reported.
const issuesURL = "https://github.com/olm-cmp/olm-cmp/issues"

// annotationFailureStatus, on a command, is the exit status of its errors
// (diff documents 3 for "could not render"); 1 otherwise.
const annotationFailureStatus = "olm-cmp.dev/failure-status"

// exitError ends a command with a chosen status, its output having already
// said everything (diff's "there are changes").
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitStatus prints err, if any, and returns the process's exit status. cmd
// is the command cobra ran or failed to run (flag and argument errors too).
func exitStatus(cmd *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Errors can quote bundle content: nothing in them may act on a terminal.
	fmt.Fprintln(stderr, "error:", echo.Lines(err.Error()))
	var ie *internalError
	if errors.As(err, &ie) && os.Getenv(EnvDebug) == "1" {
		fmt.Fprintf(stderr, "--- stack trace (%s=1) ---\n%s", EnvDebug, ie.stack)
	}
	if cmd != nil {
		if n, convErr := strconv.Atoi(cmd.Annotations[annotationFailureStatus]); convErr == nil {
			return n
		}
	}
	return 1
}

// DefaultTimeout is the deadline of a one-shot command. A render takes well
// under a second once its bundle is cached; five minutes covers a cold pull
// of a large catalog image on a slow link.
const DefaultTimeout = 5 * time.Minute

func newRootCmd() *cobra.Command {
	var timeout time.Duration
	root := &cobra.Command{
		Use:   "olm-cmp",
		Short: "Install OLM-packaged operators with Argo CD, without OLM",
		Long: `olm-cmp converts an OLM registry+v1 bundle (image or directory) exactly as OLM
would, applies the patches a cluster without OLM needs, orders the result with
Argo CD sync waves, and serves it to argocd-repo-server as a config-management plugin.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			if cmd.Name() != "serve" {
				limitMemory()
			}
		},
	}
	root.PersistentFlags().DurationVar(&timeout, "timeout", DefaultTimeout,
		"deadline of init, render, inspect, diff, resolve, upgrade, generate, health-checks and versions, registry pulls included (0 for none; serve bounds each request instead)")
	oneShot := []*cobra.Command{newInitCmd(), newRenderCmd(), newInspectCmd(), newDiffCmd(), newResolveCmd(), newUpgradeCmd(), newGenerateCmd(), newHealthChecksCmd(), newVersionsCmd()}
	for _, c := range oneShot {
		withDeadline(c, &timeout)
	}
	root.AddCommand(oneShot...)
	root.AddCommand(newVersionCmd(), newServeCmd())
	return root
}

// withDeadline runs c under the --timeout deadline. The deadline's cause
// names the flag, so an error it ends (a registry call, say, which names
// its step) says which limit fired and how to raise it.
func withDeadline(c *cobra.Command, timeout *time.Duration) {
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case *timeout < 0:
			return fmt.Errorf("--timeout %s: use a positive duration, or 0 for none", *timeout)
		case *timeout == 0:
			return run(cmd, args)
		}
		cause := &timeoutError{command: cmd.Name(), limit: *timeout}
		ctx, cancel := context.WithTimeoutCause(cmd.Context(), *timeout, cause)
		defer cancel()
		cmd.SetContext(ctx)
		err := run(cmd, args)
		if err != nil && ctx.Err() != nil && !errors.Is(err, cause) {
			// The deadline ended a step that does not say so itself.
			err = fmt.Errorf("%w: %w", err, cause)
		}
		return err
	}
}

// timeoutError is the cause of a command's --timeout deadline.
type timeoutError struct {
	command string
	limit   time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("olm-cmp %s did not finish within --timeout %s (raise it with --timeout, or 0 for no limit)", e.command, e.limit)
}

// oneShotMemoryLimit is the soft heap limit of one-shot commands (render,
// generate, inspect, diff). Printing multi-megabyte CRDs with the YAML
// encoder makes a lot of short-lived garbage (its event queue grows with the
// document). Measured on sail-operator (2.9 MB of output, idle 2 cores):
// no limit 0.22 s / 112 MiB peak RSS; 80 MiB 0.23 s / 93 MiB; 64 MiB 0.30 s /
// 80 MiB (the GC runs too often). A larger live heap simply runs over the soft
// limit, so big bundles still render. Measured again once a render kept less
// alive (issue 30; paired runs, 2 shared cores): sail-operator now allocates
// about 40 MB and never meets the limit (61 MiB peak RSS, 24 of them the
// executable's pages); a 40 MiB limit cut 2 MiB off the peak for 1.16 times
// the CPU (collections of a 20 MB live heap). Memory is cut by allocating
// less, not by collecting.
const oneShotMemoryLimit = 80 << 20

// oneShotGCPercent is the GOGC of one-shot commands: off, so the heap is
// collected only as it nears the soft limit above. A one-shot render's
// garbage dies with the process; collecting at every doubling of its small
// live heap was a quarter of a small render's CPU. Measured (2 shared
// cores, paired medians of 7, against GOGC=200): leader-worker-set 37 to 31
// CPU-ms, sail-operator 0.227 to 0.187 CPU-s, peak RSS +10 MiB (the limit
// bounds it); GOGC=100 to 200 had saved 10% before.
const oneShotGCPercent = -1

// limitMemory applies oneShotMemoryLimit and oneShotGCPercent unless
// GOMEMLIMIT or GOGC say otherwise. The server is left alone: its limit
// belongs to its container.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(oneShotMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(oneShotGCPercent)
	}
}
