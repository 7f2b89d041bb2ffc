//go:build unix

package safety

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// BenchmarkCheck measures Check on real upgrades (../shared/bundles):
// crdify's comparisons answered in process (as the tests answer them), by
// olm-cmp-check, the real executable built here, as olm-cmp runs it (one
// process per Check), and from the verdict cache (a warm diff or upgrade:
// no process). The first two start from an empty cache each time.
// cpu-ms/op counts this process's CPU and its helpers' (wall time on a
// shared machine says little: the jobs run several at once).
func BenchmarkCheck(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go command to build olm-cmp-check with")
	}
	exe := filepath.Join(b.TempDir(), checkproc.Executable)
	if out, err := exec.Command("go", "build", "-o", exe, "github.com/olm-cmp/olm-cmp/cmd/olm-cmp-check").CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/olm-cmp-check: %v\n%s", err, out)
	}
	for _, u := range []struct{ name, from, to string }{
		{"cert-manager", "cert-manager-operator-1.19.1", "cert-manager-operator-1.20.0"},
		{"loki", "loki-operator-0.10.2", "loki-operator-0.11.0"},
	} {
		load := func(dir string) *bundle.Bundle {
			path := filepath.Join("../../../shared/bundles", dir)
			if _, err := os.Stat(path); err != nil {
				b.Skipf("../shared/bundles/%s is absent (reference data outside the repository)", dir)
			}
			bd, err := bundle.LoadDir(path)
			if err != nil {
				b.Fatal(err)
			}
			return bd
		}
		from, to := load(u.from), load(u.to)
		check := func(b *testing.B, fresh bool) {
			saved := verdicts
			defer func() { verdicts = saved }()
			verdicts = checkproc.NewStore(verdictDirName)
			if !fresh { // the verdicts made once, before the clock starts
				if _, err := Check(b.Context(), from, to, Options{SelfCertified: true}); err != nil {
					b.Fatal(err)
				}
			}
			spawns, cpu0 := checkproc.Spawns(), cpuTime()
			for b.Loop() {
				if fresh {
					verdicts = checkproc.NewStore(verdictDirName)
				}
				if _, err := Check(b.Context(), from, to, Options{SelfCertified: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(checkproc.Spawns()-spawns)/float64(b.N), "processes/op")
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		}
		b.Run(u.name+"/in-process", func(b *testing.B) { check(b, true) })
		b.Run(u.name+"/helper", func(b *testing.B) {
			defer checkproc.UseExecutable(exe)()
			check(b, true)
		})
		b.Run(u.name+"/cached", func(b *testing.B) { check(b, false) })
	}
}

// cpuTime is the CPU this process and its waited-for children have used.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
