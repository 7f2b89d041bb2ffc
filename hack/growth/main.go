// Command growth prints the whole-process cost of `olm-cmp render` against
// bundle size: for each bundle directory, the median CPU-seconds (user +
// system) and peak RSS over several runs, as the kernel counts them for the
// child (the rusage /usr/bin/time prints, at microsecond resolution). With
// -base it runs a second binary alternately with the first, so both see the
// same machine load, prints the CPU ratio (the median of each pair's ratio),
// and checks both print the same bytes. With -olm-extractor it runs that
// tool instead (`run -n NS DIR`, built from lburgazzoli/olm-extractor) as
// the baseline of the renders, whose output differs and is not compared.
// hack/growth.sh is the usual way to run it; docs/operations.md's growth
// table is its output.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/olm-cmp", "olm-cmp binary to measure")
	base := flag.String("base", "", "baseline olm-cmp binary, run alternately with -bin (optional)")
	runs := flag.Int("runs", 5, "runs per bundle and binary (the median is printed)")
	cold := flag.Bool("cold", false, "give every render a new, empty --cache-dir (no CRD verdict kept by an earlier process; see docs/operations.md)")
	differOK := flag.Bool("differ-ok", false, "with -base, say on stderr when the two print different output (a base from before a change of the output) instead of failing")
	extractor := flag.String("olm-extractor", "", "olm-extractor binary: the baseline of the renders (run -n NS DIR), instead of -base")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: growth [-bin B] [-base B] [-runs N] [-cold] BUNDLE_DIR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	coldRuns, outputMayDiffer = *cold, *differOK
	if *extractor != "" {
		*base, extractorBase = *extractor, true
	}
	if err := run(*bin, *base, *runs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "growth:", err)
		os.Exit(1)
	}
}

// coldRuns gives each render its own empty cache directory (-cold).
var coldRuns bool

// outputMayDiffer reports different output of -base on stderr instead of
// failing (-differ-ok).
var outputMayDiffer bool

// extractorBase says the baseline is olm-extractor (-olm-extractor): its
// command line is its own, its output not olm-cmp's, and it has no
// start-up row.
var extractorBase bool

type sample struct {
	cpu time.Duration
	rss int64 // KiB
	out []byte
}

func run(bin, base string, runs int, dirs []string) error {
	header := "| bundle | bundle size | output | CPU (median) | peak RSS (median) |"
	rule := "|---|---:|---:|---:|---:|"
	if base != "" {
		header += " baseline CPU | CPU ratio | baseline RSS |"
		rule += "---:|---:|---:|"
	}
	fmt.Println(header)
	fmt.Println(rule)
	rows := append([]string{""}, dirs...) // "" is process start-up (olm-cmp version)
	if extractorBase {
		rows = dirs
	}
	for _, dir := range rows {
		var got, was []sample
		for range runs {
			s, err := measure(bin, dir, false)
			if err != nil {
				return err
			}
			got = append(got, s)
			if base != "" {
				b, err := measure(base, dir, extractorBase)
				if err != nil {
					return err
				}
				if dir != "" && !extractorBase && !bytes.Equal(b.out, s.out) {
					if !outputMayDiffer {
						return fmt.Errorf("%s: %s and %s print different output", dir, bin, base)
					}
					if len(was) == 0 {
						fmt.Fprintf(os.Stderr, "growth: %s: %s and %s print different output (%d and %d bytes)\n", filepath.Base(dir), bin, base, len(s.out), len(b.out))
					}
				}
				was = append(was, b)
			}
		}
		name, size := "start-up (`olm-cmp version`)", "—"
		if dir != "" {
			n, err := dirSize(dir)
			if err != nil {
				return err
			}
			name, size = filepath.Base(dir), mb(n)
		}
		out := "—"
		if dir != "" {
			out = mb(int64(len(got[0].out)))
		}
		c, r := medians(got)
		line := fmt.Sprintf("| %s | %s | %s | %.3f s | %d MiB |", name, size, out, c.Seconds(), r/1024)
		if base != "" {
			bc, br := medians(was)
			line += fmt.Sprintf(" %.3f s | %.2f | %d MiB |", bc.Seconds(), pairedRatio(got, was), br/1024)
		}
		fmt.Println(line)
	}
	return nil
}

// measure runs one render of dir (or `version` for "") under /usr/bin/time
// (as olm-extractor's `run` when extractor)
// and returns its CPU time, peak RSS and standard output. The CPU time is the
// kernel's (microseconds; time's own share is a few hundred of them, the
// same for every run); the peak RSS is time's %M: a child this process
// started itself would inherit this process's high-water mark at exec.
func measure(bin, dir string, extractor bool) (sample, error) {
	args := []string{"version"}
	switch {
	case dir != "" && extractor:
		args = []string{"run", "-n", "growth-system", dir}
	case dir != "":
		args = []string{"render", "--bundle", dir, "-n", "growth-system"}
		if coldRuns {
			cache, err := os.MkdirTemp("", "growth-cache-")
			if err != nil {
				return sample{}, err
			}
			defer os.RemoveAll(cache)
			args = append(args, "--cache-dir", cache)
		}
	}
	rssFile, err := os.CreateTemp("", "growth-rss-")
	if err != nil {
		return sample{}, err
	}
	defer os.Remove(rssFile.Name())
	rssFile.Close()
	cmd := exec.Command("/usr/bin/time", append([]string{"-o", rssFile.Name(), "-f", "%M", bin}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, errb.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	rss, err := os.ReadFile(rssFile.Name())
	if err != nil {
		return sample{}, err
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(rss)), 10, 64)
	if err != nil {
		return sample{}, fmt.Errorf("/usr/bin/time printed %q, not a peak RSS", rss)
	}
	return sample{cpu: cpu, rss: kb, out: out.Bytes()}, nil
}

// pairedRatio is the median of got[i]'s CPU over was[i]'s: each pair ran
// back to back, so the machine's load changes the two alike.
func pairedRatio(got, was []sample) float64 {
	rs := make([]float64, len(got))
	for i := range got {
		rs[i] = got[i].cpu.Seconds() / was[i].cpu.Seconds()
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

func medians(ss []sample) (time.Duration, int64) {
	cs := make([]time.Duration, len(ss))
	rs := make([]int64, len(ss))
	for i, s := range ss {
		cs[i], rs[i] = s.cpu, s.rss
	}
	slices.Sort(cs)
	slices.Sort(rs)
	return cs[len(cs)/2], rs[len(rs)/2]
}

// dirSize is the bytes of the bundle's regular files.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

func mb(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KB", (n+512)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
