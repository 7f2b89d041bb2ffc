package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Start-up bounds: every olm-cmp process (a per-request `generate` in Argo
// CD's classic plugin mode, `diff` per pull request in CI) pays its
// packages' initialisation before main. These are counts and bytes the Go
// runtime reports (GODEBUG=inittrace=1), not times, so they hold on any
// machine. They are the olm-cmp executable's own, built as make builds it:
// this test binary also links olm-cmp-check's checks (inprocess.Install),
// 150 packages and 3 MB more. Measured after olm-cmp-check took the API
// server's, crdify's and sigstore's checks and olm-cmp's own package
// variables were built on first use: 311 package inits allocating 1.72 MB
// (from 468 and 5.2 MB before issue 30). A new dependency that registers
// schemes, metrics or validators at init shows here first.
const (
	maxInitPackages  = 320
	maxInitBytes     = 1_900_000
	maxOwnInitBytes  = 32 << 10 // any one package of olm-cmp's own
	ownPackagePrefix = "github.com/olm-cmp/olm-cmp/"
)

func TestStartupInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds olm-cmp: skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "olm-cmp")
	if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GODEBUG=") || strings.HasPrefix(kv, "GOGC=")
	})
	cmd.Env = append(env, "GODEBUG=inittrace=1,gctrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var inits, total int
	var own []string
	var gcDuringInit string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "gc ") && gcDuringInit == "" {
			gcDuringInit = line
			continue
		}
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		if gcDuringInit != "" {
			t.Errorf("the collector ran before package %s initialised (internal/initgc keeps it off until main's init): %s", f[1], gcDuringInit)
			gcDuringInit = "reported"
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		inits++
		total += b
		if strings.HasPrefix(f[1], ownPackagePrefix) && b > maxOwnInitBytes {
			own = append(own, f[1]+" "+f[7]+" bytes")
		}
	}
	if inits == 0 {
		t.Fatalf("no inittrace lines: %s", stderr.String())
	}
	t.Logf("%d package inits, %d bytes allocated", inits, total)
	if inits > maxInitPackages {
		t.Errorf("%d packages initialise at start-up, over %d: a new dependency runs its init in every olm-cmp process", inits, maxInitPackages)
	}
	if total > maxInitBytes {
		t.Errorf("package initialisation allocates %d bytes, over %d: find the new init (GODEBUG=inittrace=1 olm-cmp version) and build it on first use", total, maxInitBytes)
	}
	for _, o := range own {
		t.Errorf("%s at init, over %d: build it on first use (sync.OnceValue)", o, maxOwnInitBytes)
	}
}
