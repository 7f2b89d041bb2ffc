package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is an `olm-cmp serve` process driven only through its socket and
// its HTTP listener, with its own TMPDIR so its temporary files can be
// counted.
type server struct {
	cmd      *exec.Cmd
	socket   string
	httpAddr string
	tmp      string
	log      *os.File
	exited   chan error
}

// startServer runs bin serve with the socket in sockDir (which exists, so
// the run needs no --create-socket-dir) and waits for the socket and the
// metrics endpoint.
func startServer(bin, config, sockDir, tmp, logPath string, env []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &server{httpAddr: port, tmp: tmp, log: logf, exited: make(chan error, 1)}
	s.cmd = exec.Command(bin, "serve", "--config", config, "--socket-dir", sockDir, "--http-addr", port, "--log-format", "json")
	s.cmd.Env = append(append([]string{}, env...), "TMPDIR="+tmp)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- s.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		socks, _ := filepath.Glob(filepath.Join(sockDir, "*.sock"))
		if len(socks) == 1 {
			if _, err := s.metrics(); err == nil {
				s.socket = socks[0]
				return s, nil
			}
		}
		select {
		case err := <-s.exited:
			return nil, fmt.Errorf("olm-cmp serve exited at start (%v); log: %s", err, logPath)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("olm-cmp serve did not listen within 30s; log: %s", logPath)
		}
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// stop sends SIGTERM and waits for the process (SIGKILL after 30 s).
func (s *server) stop() error {
	defer s.log.Close()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		return err
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		return fmt.Errorf("olm-cmp serve did not stop within 30s of SIGTERM")
	}
}

// metrics scrapes /metrics into name{labels} -> value (untyped: this is for
// a handful of gauges and counters).
func (s *server) metrics() (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.httpAddr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// sumMetric adds every series of a metric family (all label sets).
func sumMetric(m map[string]float64, name string) float64 {
	var total float64
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			total += v
		}
	}
	return total
}

// clockTick is USER_HZ, 100 on every Linux the project builds for (the value
// is fixed by the kernel ABI for /proc, whatever CONFIG_HZ is).
const clockTick = 100

// cpuSeconds is the process's user+system CPU time from /proc/PID/stat.
func (s *server) cpuSeconds() (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	f := strings.Fields(rest)
	// rest starts at field 3 (state); utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", s.cmd.Process.Pid)
	}
	return (ut + st) / clockTick, nil
}

// procStatus reads a "kB" field of /proc/PID/status (VmHWM, VmRSS) in bytes.
func (s *server) procStatus(field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", s.cmd.Process.Pid, field)
}

// leftovers lists what is left in the server's TMPDIR of its requests: every
// file, and every directory below the server's own work directories (depth
// 1). While the server lives (live), the dot-files it keeps in its work
// directory (a lock or marker) are its own, not leftovers.
func leftovers(tmp string, live bool) []string {
	var out []string
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == tmp {
			return nil
		}
		rel, _ := filepath.Rel(tmp, p)
		depth := strings.Count(rel, string(filepath.Separator)) + 1
		switch {
		case d.IsDir() && depth == 1:
			return nil // the server's work directory: look inside
		case live && depth == 2 && !d.IsDir() && strings.HasPrefix(d.Name(), "."):
			return nil
		}
		out = append(out, rel)
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return out
}

// dumpGoroutines sends SIGQUIT, which makes the Go runtime print every
// goroutine's stack to the log and exit, and summarizes the dump: how many
// goroutines wait in each function (the first frame outside the runtime).
func (s *server) dumpGoroutines() []string {
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.log.Close()
	data, err := os.ReadFile(s.log.Name())
	if err != nil {
		return []string{err.Error()}
	}
	counts := map[string]int{}
	for _, block := range strings.Split(string(data), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if len(lines) < 2 || !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		where := lines[1]
		for i := 1; i < len(lines); i += 2 {
			if !strings.HasPrefix(lines[i], "runtime.") && !strings.HasPrefix(lines[i], "internal/") {
				where = lines[i]
				break
			}
		}
		if j := strings.LastIndexByte(where, '('); j > 0 {
			where = where[:j]
		}
		counts[where]++
	}
	var out []string
	for w, n := range counts {
		out = append(out, fmt.Sprintf("%4d %s", n, w))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out[:min(len(out), 15)]
}
