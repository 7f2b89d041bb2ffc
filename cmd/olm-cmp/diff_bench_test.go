package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The diff benchmarks compare `diff DIR -n other` (both sides rendered,
// every object changed by the namespace) with the one `render DIR` it is
// made of: issue 18 asks diff to cost at most 2.5x the two renders.

func BenchmarkCLIRenderSail(b *testing.B) { benchCLI(b, "sailoperator-1.30.3", "render") }
func BenchmarkCLIDiffSail(b *testing.B) {
	benchCLI(b, "sailoperator-1.30.3", "diff", "-n", "other", "-o", "text")
}
func BenchmarkCLIRenderKubevirt(b *testing.B) {
	benchCLI(b, "community-kubevirt-hyperconverged-1.18.1", "render")
}
func BenchmarkCLIDiffKubevirt(b *testing.B) {
	benchCLI(b, "community-kubevirt-hyperconverged-1.18.1", "diff", "-n", "other", "-o", "text")
}

// benchCLI runs olm-cmp CMD DIR ARGS... on a spec naming the shared bundle,
// as main does (a cold render each time: a new cache directory).
func benchCLI(b *testing.B, bundle, cmd string, args ...string) {
	dir, err := filepath.Abs(filepath.Join("../../../shared/bundles", bundle))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("../shared/bundles/%s is absent (reference data outside the repository): %v", bundle, err)
	}
	spec := b.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: " + dir + "\n  namespace: bench\n"
	if err := os.WriteFile(filepath.Join(spec, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	// CPU time, not only wall time: the machines benchmarks run on are
	// shared, and the target is CPU (diff <= 2.5x two renders).
	start := cpuTime(b)
	for b.Loop() {
		var out, errOut bytes.Buffer
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append([]string{cmd, spec, "--cache-dir", b.TempDir()}, args...))
		c, err := root.ExecuteC()
		if code := exitStatus(c, err, &errOut); code > diffChanges {
			b.Fatalf("exit status %d:\n%s", code, errOut.String())
		}
		if out.Len() == 0 {
			b.Fatal("nothing on stdout")
		}
	}
	b.ReportMetric((cpuTime(b)-start).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCLIDiffBigCRD is issue 26's hostile bump: two CRDs of 100,000
// properties (2.7 MB of JSON each), every property's type changed (the CRD
// is beyond the safety check's limits, a finding says so: exit status 2).
// Each iteration runs `olm-cmp diff FROM TO` in a child process (this test
// binary, TestDiffBigCRDChild) and reports its wall and CPU time and its
// peak RSS, the figure docs/operations.md bounds. Issue 26 measured 18.3 s
// and 515 MB.
func BenchmarkCLIDiffBigCRD(b *testing.B) {
	from, to := bigCRDPair(b, 100000)
	var wall, cpu time.Duration
	var rss int64
	for b.Loop() {
		child := exec.Command(os.Args[0], "-test.run=^TestDiffBigCRDChild$", "-test.count=1")
		child.Env = append(os.Environ(), envDiffChild+"="+from+"\n"+to)
		start := time.Now()
		out, err := child.CombinedOutput()
		wall += time.Since(start)
		if err != nil || !bytes.Contains(out, []byte("PASS")) {
			b.Fatalf("the child failed: %v\n%s", err, out)
		}
		ru := child.ProcessState.SysUsage().(*syscall.Rusage)
		cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		rss = max(rss, ru.Maxrss) // KiB on Linux
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/op")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
}

// envDiffChild passes BenchmarkCLIDiffBigCRD's directories to its child.
const envDiffChild = "OLM_CMP_BENCH_DIFF_CHILD"

// TestDiffBigCRDChild is BenchmarkCLIDiffBigCRD's child process: one diff,
// as main runs it (the one-shot memory limit included), of the directories
// the benchmark passes; it skips when run otherwise.
func TestDiffBigCRDChild(t *testing.T) {
	dirs := os.Getenv(envDiffChild)
	if dirs == "" {
		t.Skip("the child process of BenchmarkCLIDiffBigCRD")
	}
	from, to, _ := strings.Cut(dirs, "\n")
	out, stderr, code := runStatus(t, "diff", from, to)
	if code != diffUnsafe || !strings.Contains(out, "ships it with 100003 schema properties") || !strings.Contains(out, "v1alpha1: schema changed") {
		t.Fatalf("status %d (want %d), stdout %.600s\nstderr %s", code, diffUnsafe, out, stderr)
	}
}
