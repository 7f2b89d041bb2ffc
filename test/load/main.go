// Command load drives a built `olm-cmp serve` the way a busy
// argocd-repo-server does, through its unix socket only, and reports what
// it cost and whether anything was wrong (`make load`). It is a measurement,
// not a timed test: it fails only on wrong answers, unclear errors, leaked
// goroutines or temporary files, or a heap that does not come back.
//
//  1. An in-process registry (go-containerregistry's pkg/registry, on
//     127.0.0.1) holds the repository's own bundles (examples/demo,
//     the plugin server's tiny test bundle) and, when ../shared is present,
//     lws-operator and sail-operator, each as one image its tag names (warmed
//     up before the load) and two more the digest scenarios pin (pulled for
//     the first time during the load). While the load runs, a share of the
//     registry's requests fail: 500s, connection resets, blob downloads cut
//     off halfway (which must never become a partial bundle).
//  2. A repository like a GitOps repo holds one application directory per
//     spec variant (tags, digests, directory bundles, extra manifests,
//     overrides through plugin env and parameters, and specs that must fail).
//     `olm-cmp generate` renders each once: the reference.
//  3. `olm-cmp serve` gets its own TMPDIR, cache directory and socket
//     directory. After a warm-up, N GenerateManifest calls go over C
//     concurrent gRPC connections, streamed as Argo CD streams them (metadata,
//     then the repository tarball in 1 KiB chunks); some clients cancel
//     halfway. Every success must equal the reference render; every failure
//     must be a clear error.
//  4. The fleet: one request per Application of an ApplicationSet of 5
//     operators over 200 clusters, differing only in Application name and
//     destination; what the server spends on them is the figure.
//  5. After the load the server's goroutines, in-flight gauge and
//     temporary files must come back to where they were, and its heap (after
//     a collection) must not grow across the fleet's cached calls; this
//     process's own goroutines are checked with goleak.
//
// Figures depend on the machine and what else runs on it: the table ends
// with the CPU count and load average.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
)

type config struct {
	bin, root, shared string
	requests, conns   int
	faultRate         float64
	cancelRate        float64
	clusters          int
	seed              uint64
	keep              bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/olm-cmp", "the olm-cmp binary to serve")
	flag.StringVar(&c.root, "root", ".", "the repository root (for its bundles and plugin.yaml)")
	flag.StringVar(&c.shared, "shared", "../shared", "reference data with real bundles (lws-operator, sail-operator); skipped when missing")
	flag.IntVar(&c.requests, "requests", 2000, "GenerateManifest calls of the mixed load")
	flag.IntVar(&c.conns, "conns", 64, "concurrent gRPC connections")
	flag.Float64Var(&c.faultRate, "fault-rate", 0.10, "share of registry requests that fail during the mixed load")
	flag.Float64Var(&c.cancelRate, "cancel-rate", 0.05, "share of clients that cancel their call midway")
	flag.IntVar(&c.clusters, "clusters", 200, "clusters of the fleet ApplicationSet (5 operators each)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the request mix and the faults")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory (server log, repository) for inspection")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// phase is what one batch of calls got and cost.
type phase struct {
	outcomes []outcome
	wall     time.Duration
	cpu      float64
	before   map[string]float64
	after    map[string]float64
}

func run(c config) (err error) {
	tmp, err := os.MkdirTemp("", "olm-cmp-load-")
	if err != nil {
		return err
	}
	defer func() {
		if c.keep || err != nil {
			fmt.Printf("work directory kept: %s\n", tmp)
			return
		}
		os.RemoveAll(tmp)
	}()
	for _, d := range []string{"repo", "sock", "server-tmp", "cache", "refcache", "home"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			return err
		}
	}
	bin, err := filepath.Abs(c.bin)
	if err != nil {
		return err
	}

	// Registry and bundles.
	bundles := []*bundleSource{
		{name: "tiny", dir: filepath.Join(c.root, "internal/cmpserver/testdata/repo/bundles/tiny"), inRepo: true},
		{name: "demo", dir: filepath.Join(c.root, "examples/demo/bundle"), inRepo: true},
	}
	if _, err := os.Stat(filepath.Join(c.shared, "bundles")); err == nil {
		bundles = append(bundles,
			&bundleSource{name: "lws", dir: filepath.Join(c.shared, "bundles/leader-worker-set-1.0.0")},
			&bundleSource{name: "sail", dir: filepath.Join(c.shared, "bundles/sailoperator-1.30.3")})
	} else {
		fmt.Printf("note: %s/bundles not found: lws-operator and sail-operator are left out of the mix\n", c.shared)
	}
	reg := newFaultRegistry(c.faultRate, c.seed)
	regSrv, err := startRegistry(reg)
	if err != nil {
		return err
	}
	host := regSrv.host
	registryStopped := false
	defer func() {
		if !registryStopped {
			regSrv.stop()
		}
	}()
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range bundles {
		if b.digest, err = pushBundle(host, b.name, "v1", b.dir, epoch); err != nil {
			return err
		}
		for i := range 2 {
			d, err := pushBundle(host, b.name, fmt.Sprintf("v1-cold%d", i+1), b.dir, epoch.Add(time.Duration(i+1)*time.Hour))
			if err != nil {
				return err
			}
			b.cold = append(b.cold, d)
		}
	}

	// Repository, scenarios, reference renders.
	repo := filepath.Join(tmp, "repo")
	scenarios, err := writeRepo(repo, host, bundles)
	if err != nil {
		return err
	}
	tgz, checksum, err := tgzRepo(repo)
	if err != nil {
		return err
	}
	baseEnv := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(tmp, "home"), // no docker config of the user's
		"OLM_CMP_INSECURE_REGISTRIES=" + host,
	}
	start := time.Now()
	for _, s := range scenarios {
		if err := referenceRender(bin, repo, s, append(slices.Clone(baseEnv), "OLM_CMP_CACHE_DIR="+filepath.Join(tmp, "refcache"))); err != nil {
			return err
		}
	}
	fmt.Printf("reference renders: %d scenarios in %s; repository tarball %d bytes\n", len(scenarios), time.Since(start).Round(time.Millisecond), len(tgz))

	// Server.
	serverTmp := filepath.Join(tmp, "server-tmp")
	srv, err := startServer(bin, filepath.Join(c.root, "plugin.yaml"), filepath.Join(tmp, "sock"), serverTmp,
		filepath.Join(tmp, "server.log"), append(slices.Clone(baseEnv), "OLM_CMP_CACHE_DIR="+filepath.Join(tmp, "cache")))
	if err != nil {
		return err
	}
	serverStopped := false
	defer func() {
		if !serverStopped {
			srv.stop()
		}
	}()
	privatePaths := []string{tmp, serverTmp}
	v := newVerifier()
	var problems []string
	problem := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	// Warm-up: each scenario but the cold ones once, on one connection,
	// without faults, so the baseline below holds warm caches.
	var warm []request
	for _, s := range scenarios {
		if !s.cold {
			warm = append(warm, request{s: s, appName: s.name, destNS: "warm"})
		}
	}
	w := drive(srv, 1, warm, tgz, checksum)
	judge(w.outcomes, v, privatePaths, problem)

	// Baseline: no client connected, no pooled registry connection, and
	// the heap as the next collection leaves it.
	heavy := heaviest(scenarios)
	regSrv.dropIdle()
	time.Sleep(time.Second)
	base, err := srv.metrics()
	if err != nil {
		return err
	}
	baseHeap, err := nudgeGC(srv, heavy, tgz, checksum)
	if err != nil {
		return err
	}

	// Mixed load, with registry faults.
	rng := rand.New(rand.NewPCG(c.seed, 2))
	reqs := planMixed(scenarios, c.requests, c.cancelRate, rng)
	reg.enabled.Store(true)
	regReqs0 := reg.requests.Load()
	load := drive(srv, c.conns, reqs, tgz, checksum)
	reg.enabled.Store(false)
	faults := faultCounts{total: reg.faults(), status500: reg.status500.Load(), resets: reg.resets.Load(), truncated: reg.truncated.Load()}
	regReqs := reg.requests.Load() - regReqs0
	judge(load.outcomes, v, privatePaths, problem)
	loadHeap, err := nudgeGC(srv, heavy, tgz, checksum)
	if err != nil {
		return err
	}

	// Fleet: 5 operators x clusters, no faults.
	fleet := drive(srv, c.conns, planFleet(scenarios, c.clusters), tgz, checksum)
	judge(fleet.outcomes, v, privatePaths, problem)
	for _, o := range fleet.outcomes {
		if o.code != codes.OK {
			problem("fleet %s: failed without any registry fault: %s", o.req.appName, o.msg)
			break
		}
	}

	// Settle: every count back to its baseline.
	regSrv.dropIdle()
	settled, settleErr := settle(srv, base)
	settledHeap, err := nudgeGC(srv, heavy, tgz, checksum)
	if err != nil {
		return err
	}
	// The fleet only re-serves cached answers: a heap that grew across it
	// holds something per call.
	if g, g0 := settledHeap["go_memstats_next_gc_bytes"], loadHeap["go_memstats_next_gc_bytes"]; g > g0+16<<20 {
		problem("server heap grew across the fleet's %d cached calls: GC goal %s after, %s before", c.clusters*5, mib(g), mib(g0))
	}
	if g, g0 := settledHeap["go_memstats_next_gc_bytes"], baseHeap["go_memstats_next_gc_bytes"]; g > 2*g0+64<<20 {
		problem("server heap did not come back near its baseline: GC goal %s after the run, %s at the baseline", mib(g), mib(g0))
	}
	liveLeft := leftovers(serverTmp, true)
	hwm, hwmErr := srv.procStatus("VmHWM")
	if hwmErr != nil {
		return hwmErr
	}
	if settleErr != nil {
		problem("%v", settleErr)
		// Ask the Go runtime for every goroutine's stack (it exits after).
		for _, line := range srv.dumpGoroutines() {
			problem("  server goroutines: %s", line)
		}
	} else if err := srv.stop(); err != nil {
		problem("olm-cmp serve did not stop cleanly on SIGTERM: %v", err)
	}
	serverStopped = true
	deadLeft := leftovers(serverTmp, false)
	if len(liveLeft) > 0 {
		problem("temporary files left in the server's TMPDIR while idle: %s", strings.Join(first(liveLeft, 10), ", "))
	}
	if len(deadLeft) > 0 {
		problem("temporary files left in the server's TMPDIR after it stopped: %s", strings.Join(first(deadLeft, 10), ", "))
	}
	regSrv.stop()
	registryStopped = true
	if err := goleak.Find(); err != nil {
		problem("goroutines left in the load process: %v", err)
	}

	report(c, bundles, scenarios, load, fleet, base, settled, []map[string]float64{baseHeap, loadHeap, settledHeap}, hwm, faults, regReqs, len(liveLeft)+len(deadLeft))
	if len(problems) > 0 {
		fmt.Printf("\nPROBLEMS (%d):\n", len(problems))
		for _, p := range first(problems, 30) {
			fmt.Println("  -", p)
		}
		return fmt.Errorf("%d problems (server log: %s)", len(problems), filepath.Join(tmp, "server.log"))
	}
	fmt.Println("\nno problems: every success equals its reference render, every failure is a clear error, nothing leaked")
	return nil
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// planMixed draws n calls from the scenarios by weight; a share cancels.
func planMixed(scenarios []*scenario, n int, cancelRate float64, rng *rand.Rand) []request {
	total := 0
	for _, s := range scenarios {
		total += s.weight
	}
	out := make([]request, n)
	for i := range out {
		k := rng.IntN(total)
		var s *scenario
		for _, s = range scenarios {
			if k -= s.weight; k < 0 {
				break
			}
		}
		r := request{s: s, appName: fmt.Sprintf("%s-%04d", s.name, i), destNS: s.name}
		if rng.Float64() < cancelRate {
			r.cancel = 1 + rng.IntN(2)
			r.delay = time.Duration(rng.IntN(40)) * time.Millisecond
		}
		out[i] = r
	}
	return out
}

// planFleet is an ApplicationSet's worth of calls: 5 operators (the tag
// scenarios first, then directory bundles) on every cluster, each
// Application named after both, with the cluster's destination namespace.
func planFleet(scenarios []*scenario, clusters int) []request {
	var ops []*scenario
	for _, suffix := range []string{"-tag", "-dir", "-extra"} {
		for _, s := range scenarios {
			if len(ops) < 5 && !s.wantError && strings.HasSuffix(s.name, suffix) {
				ops = append(ops, s)
			}
		}
	}
	var out []request
	for c := range clusters {
		for _, s := range ops {
			out = append(out, request{s: s, appName: fmt.Sprintf("%s-cluster-%03d", s.name, c), destNS: fmt.Sprintf("cluster-%03d", c)})
		}
	}
	return out
}

// drive makes the calls over conns connections (each worker its own), and
// measures the server's CPU time and metrics around them.
func drive(srv *server, conns int, reqs []request, repo []byte, checksum string) phase {
	p := phase{outcomes: make([]outcome, len(reqs))}
	p.before, _ = srv.metrics()
	cpu0, _ := srv.cpuSeconds()
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(conns, len(reqs)) {
		conn, client, err := dial(srv.socket)
		if err != nil {
			panic(err) // grpc.NewClient fails only on a malformed target
		}
		wg.Add(1)
		go func(conn *grpc.ClientConn, client pluginpb.ConfigManagementPluginServiceClient) {
			defer wg.Done()
			defer conn.Close()
			for i := range work {
				p.outcomes[i] = generate(context.Background(), client, repo, checksum, reqs[i])
			}
		}(conn, client)
	}
	for i := range reqs {
		work <- i
	}
	close(work)
	wg.Wait()
	p.wall = time.Since(start)
	cpu1, _ := srv.cpuSeconds()
	p.cpu = cpu1 - cpu0
	p.after, _ = srv.metrics()
	return p
}

// judge checks each outcome: a success equals its reference, a failure is a
// clear error and expected (a spec that must fail, a registry fault, a
// cancel).
func judge(outs []outcome, v *verifier, private []string, problem func(string, ...any)) {
	for _, o := range outs {
		s := o.req.s
		switch {
		case o.code == codes.OK && s.wantError:
			problem("%s: succeeded, the reference render fails with: %s", s.name, s.refError)
		case o.code == codes.OK:
			if why := v.check(s, o.manifests); why != "" {
				problem("%s: %s", s.name, why)
			}
		case o.code == codes.Canceled && o.req.cancel != 0:
			// The client gave up; the server's side is checked by the settle.
		case o.code == codes.DeadlineExceeded && o.latency >= callTimeout:
			problem("%s: no answer within the client's %s deadline", s.name, callTimeout)
		default:
			if why := unclear(o.msg, private...); why != "" {
				problem("%s: %s: %q", s.name, why, o.msg)
			}
			if !s.wantError && !s.usesRegistry && o.req.cancel == 0 {
				problem("%s: failed without touching the registry: %s: %s", s.name, o.code, o.msg)
			}
		}
	}
}

// settle waits (up to 60 s) for the server's goroutines and in-flight gauge
// to come back to the baseline, and returns the metrics then.
func settle(srv *server, base map[string]float64) (map[string]float64, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := srv.metrics()
		if err != nil {
			return nil, err
		}
		g, g0 := m["go_goroutines"], base["go_goroutines"]
		inflight := sumMetric(m, "olm_cmp_requests_in_flight")
		if g <= g0+2 && inflight == 0 {
			return m, nil
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("server did not settle within 60s: %.0f goroutines (baseline %.0f), %.0f requests in flight", g, g0, inflight)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// heaviest is the warm scenario with the largest answer.
func heaviest(scenarios []*scenario) *scenario {
	var best *scenario
	size := -1
	for _, s := range scenarios {
		n := 0
		for _, m := range s.reference {
			n += len(m)
		}
		if !s.cold && !s.wantError && n > size {
			best, size = s, n
		}
	}
	return best
}

// nudgeGC makes the server collect garbage while idle, so its heap can be
// compared between two points of the run: an idle server does not collect
// (until the runtime's 2-minute forced collection), and what it has in use
// then is mostly garbage. It asks for the heaviest cached answer, one call at
// a time, until the server has finished two collections, and returns the
// metrics then. The GC goal (go_memstats_next_gc_bytes) is set from the heap
// that survived the last collection, during which only one call was in
// flight.
func nudgeGC(srv *server, heavy *scenario, repo []byte, checksum string) (map[string]float64, error) {
	m0, err := srv.metrics()
	if err != nil {
		return nil, err
	}
	conn, client, err := dial(srv.socket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for range 200 {
		if o := generate(context.Background(), client, repo, checksum, request{s: heavy, appName: "gc-nudge", destNS: "gc"}); o.code != codes.OK {
			return nil, fmt.Errorf("heap measurement call (%s) failed: %s", heavy.name, o.msg)
		}
		m, err := srv.metrics()
		if err != nil {
			return nil, err
		}
		if m["go_gc_duration_seconds_count"] >= m0["go_gc_duration_seconds_count"]+2 {
			return m, nil
		}
	}
	return nil, fmt.Errorf("the server did not collect garbage in 200 calls of %s", heavy.name)
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

var (
	digestRE = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	hostRE   = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
)

// faultCounts are the registry faults injected (only during the mixed load).
type faultCounts struct{ total, status500, resets, truncated int64 }

func report(c config, bundles []*bundleSource, scenarios []*scenario, load, fleet phase, base, settled map[string]float64, heap []map[string]float64, hwm int64, faults faultCounts, regReqs int64, left int) {
	var ok, failed, cancelled, expected int
	var lat []time.Duration
	msgs := map[string]int{}
	for _, o := range load.outcomes {
		switch {
		case o.code == codes.OK:
			ok++
			lat = append(lat, o.latency)
		case o.code == codes.Canceled && o.req.cancel != 0:
			cancelled++
		default:
			if o.req.s.wantError {
				expected++
			} else {
				failed++
			}
			m := hostRE.ReplaceAllString(digestRE.ReplaceAllString(o.msg, "sha256:…"), "<registry>")
			msgs[fmt.Sprintf("%s: %.200s", o.code, m)]++
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(100 * time.Microsecond)
	}
	var names []string
	for _, b := range bundles {
		names = append(names, b.name)
	}
	fmt.Printf("\nolm-cmp serve under load: bundles %s; %d scenarios; %d calls over %d connections; %.0f%% registry faults, %.0f%% cancelling clients\n\n",
		strings.Join(names, ", "), len(scenarios), len(load.outcomes), c.conns, 100*c.faultRate, 100*c.cancelRate)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	row := func(k, f string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(f, a...)) }
	row("mixed load: wall time", "%s", load.wall.Round(time.Millisecond))
	row("  throughput", "%.1f calls/s", float64(len(load.outcomes))/load.wall.Seconds())
	row("  succeeded / expected failures / failed / cancelled", "%d / %d / %d / %d", ok, expected, failed, cancelled)
	row("  latency of successes p50 / p99", "%s / %s", pct(0.50), pct(0.99))
	row("  server CPU", "%.2f s, %.1f ms per call", load.cpu, 1000*load.cpu/float64(len(load.outcomes)))
	row("  registry requests / injected faults (500, reset, cut body)", "%d / %d (%d, %d, %d)", regReqs, faults.total, faults.status500, faults.resets, faults.truncated)
	row("  renders / registry pulls (metrics)", "%.0f / %.0f",
		sumMetric(load.after, "olm_cmp_renders_total")-sumMetric(load.before, "olm_cmp_renders_total"),
		sumMetric(load.after, "olm_cmp_registry_pulls_total")-sumMetric(load.before, "olm_cmp_registry_pulls_total"))
	row(fmt.Sprintf("fleet: %d calls (5 operators x %d clusters)", len(fleet.outcomes), c.clusters), "%s wall, %.1f calls/s", fleet.wall.Round(time.Millisecond), float64(len(fleet.outcomes))/fleet.wall.Seconds())
	row("  server CPU", "%.2f s in total, %.2f ms per call", fleet.cpu, 1000*fleet.cpu/float64(len(fleet.outcomes)))
	row("  renders / registry resolves / MiB served (metrics)", "%.0f / %.0f / %.1f",
		sumMetric(fleet.after, "olm_cmp_renders_total")-sumMetric(fleet.before, "olm_cmp_renders_total"),
		sumMetric(fleet.after, "olm_cmp_registry_resolves_total")-sumMetric(fleet.before, "olm_cmp_registry_resolves_total"),
		(sumMetric(fleet.after, "olm_cmp_bytes_served_total")-sumMetric(fleet.before, "olm_cmp_bytes_served_total"))/(1<<20))
	row("server peak RSS (VmHWM)", "%s", mib(float64(hwm)))
	row("server goroutines: baseline / settled", "%.0f / %.0f", base["go_goroutines"], settled["go_goroutines"])
	for _, k := range []struct{ label, metric string }{
		{"server heap in use after a GC: baseline / after load / after fleet", "go_memstats_heap_inuse_bytes"},
		{"server heap GC goal: baseline / after load / after fleet", "go_memstats_next_gc_bytes"},
	} {
		row(k.label, "%s / %s / %s", mib(heap[0][k.metric]), mib(heap[1][k.metric]), mib(heap[2][k.metric]))
	}
	row("server requests in flight after settle", "%.0f", sumMetric(settled, "olm_cmp_requests_in_flight"))
	row("temporary files left by the server", "%d", left)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	row("this load process: CPU (clients, verification)", "%.1f s", float64(ru.Utime.Sec+ru.Stime.Sec)+float64(ru.Utime.Usec+ru.Stime.Usec)/1e6)
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		row("machine: CPUs / load average (1, 5 min)", "%d / %s", runtime.NumCPU(), strings.Join(strings.Fields(string(la))[:2], ", "))
	}
	tw.Flush()
	if len(msgs) > 0 {
		type kv struct {
			k string
			n int
		}
		var all []kv
		for k, n := range msgs {
			all = append(all, kv{k, n})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].k < all[j].k })
		fmt.Printf("\nerrors the clients saw (%d distinct, most frequent first):\n", len(all))
		for _, e := range first(all, 12) {
			fmt.Printf("  %5d  %s\n", e.n, e.k)
		}
	}
}
