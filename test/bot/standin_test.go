package bot

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The stand-ins for gh and glab: the test binary runs as one of them when
// envStandIn names it (see TestMain), with the forge's state in a JSON file
// under envForgeDir. Each call is logged (argv and stdin) and answered as the
// real CLI answers the calls the bot makes; a flag the real command lacks is
// refused as the real CLI refuses it, so the bot cannot rely on a flag that
// does not exist.
const (
	envStandIn  = "OLM_CMP_BOT_TEST_STANDIN" // gh or glab
	envForgeDir = "OLM_CMP_BOT_TEST_FORGE"
)

// call is one logged invocation of a stand-in.
type call struct {
	Tool  string   `json:"tool"`
	Args  []string `json:"args"`
	Stdin string   `json:"stdin"`
}

// request is one pull request (GitHub) or merge request (GitLab).
type request struct {
	Number   int      `json:"number"`
	Head     string   `json:"head"`
	Base     string   `json:"base"`
	Title    string   `json:"title"` // GitLab: with its "Draft: " prefix, as GitLab keeps it
	Body     string   `json:"body"`
	Labels   []string `json:"labels"`
	Draft    bool     `json:"draft"`
	State    string   `json:"state"` // open, closed, merged
	Comments []string `json:"comments"`
}

type forgeState struct {
	Next     int        `json:"next"`
	Labels   []string   `json:"labels"` // GitHub's repository labels
	Requests []*request `json:"requests"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func loadState(dir string) (*forgeState, error) {
	s := &forgeState{Next: 1}
	data, err := os.ReadFile(statePath(dir))
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	return s, json.Unmarshal(data, s)
}

func saveState(dir string, s *forgeState) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(statePath(dir), data, 0o644)
}

// runStandIn is main for the stand-ins: it returns the exit status.
func runStandIn(tool string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	dir := os.Getenv(envForgeDir)
	in, _ := io.ReadAll(io.LimitReader(stdin, 1<<20))
	logf, err := os.OpenFile(filepath.Join(dir, "calls.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	line, _ := json.Marshal(call{Tool: tool, Args: args, Stdin: string(in)})
	logf.Write(append(line, '\n'))
	logf.Close()
	s, err := loadState(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var out string
	switch tool {
	case "gh":
		out, err = gh(s, args)
	case "glab":
		out, err = glab(s, args)
	default:
		err = fmt.Errorf("no stand-in for %s", tool)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := saveState(dir, s); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprint(stdout, out)
	return 0
}

// flags parses args as cobra does for the flags spec lists ("name" takes a
// value, "name!" is a boolean; "a=name" makes -a a shorthand): it returns
// the values (a repeated flag keeps each) and the positional arguments.
func flags(args []string, spec ...string) (map[string][]string, []string, error) {
	takes, short := map[string]bool{}, map[string]string{}
	for _, s := range spec {
		if sh, long, ok := strings.Cut(s, "="); ok {
			short[sh], s = strings.TrimSuffix(long, "!"), long
		}
		takes[strings.TrimSuffix(s, "!")] = !strings.HasSuffix(s, "!")
	}
	got, pos := map[string][]string{}, []string(nil)
	for i := 0; i < len(args); i++ {
		a := args[i]
		var name, value string
		var hasValue bool
		switch {
		case strings.HasPrefix(a, "--"):
			name, value, hasValue = strings.Cut(a[2:], "=")
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if short[a[1:2]] == "" {
				return nil, nil, fmt.Errorf("unknown shorthand flag: %q in %s", a[1:2], a)
			}
			name, value, hasValue = short[a[1:2]], a[2:], len(a) > 2
		default:
			pos = append(pos, a)
			continue
		}
		wantValue, ok := takes[name]
		if !ok {
			return nil, nil, fmt.Errorf("unknown flag: --%s", name)
		}
		if wantValue && !hasValue {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("flag needs an argument: --%s", name)
			}
			i++
			value = args[i]
		}
		if !wantValue {
			value = "true"
		}
		got[name] = append(got[name], value)
	}
	return got, pos, nil
}

func one(f map[string][]string, name string) string {
	if v := f[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func (s *forgeState) find(num string) (*request, error) {
	n, err := strconv.Atoi(num)
	if err == nil {
		for _, r := range s.Requests {
			if r.Number == n {
				return r, nil
			}
		}
	}
	return nil, fmt.Errorf("no pull request found for %q", num)
}

func splitLabels(vs []string) []string {
	var out []string
	for _, v := range vs {
		out = append(out, strings.Split(v, ",")...)
	}
	return out
}

func addLabels(r *request, ls []string) {
	for _, l := range ls {
		if !slices.Contains(r.Labels, l) {
			r.Labels = append(r.Labels, l)
		}
	}
	slices.Sort(r.Labels)
}

func readBody(f map[string][]string) (string, error) {
	p := one(f, "body-file")
	if p == "" {
		return one(f, "body"), nil
	}
	data, err := os.ReadFile(p)
	return string(data), err
}

// gh answers gh pr list/create/edit/ready/close and gh label create.
func gh(s *forgeState, args []string) (string, error) {
	if len(args) < 2 {
		return "", fmt.Errorf("gh: unexpected %q", args)
	}
	url := func(r *request) string { return fmt.Sprintf("https://github.com/org/repo/pull/%d\n", r.Number) }
	switch args[0] + " " + args[1] {
	case "label create":
		f, pos, err := flags(args[2:], "c=color", "d=description", "f=force!")
		if err != nil || len(pos) != 1 {
			return "", fmt.Errorf("gh label create: %v %q", err, pos)
		}
		if slices.Contains(s.Labels, pos[0]) && one(f, "force") == "" {
			return "", fmt.Errorf("label with name %q already exists; use `--force` to update its color and description", pos[0])
		}
		if !slices.Contains(s.Labels, pos[0]) {
			s.Labels = append(s.Labels, pos[0])
		}
		return "", nil
	case "pr list":
		f, pos, err := flags(args[2:], "H=head", "B=base", "s=state", "L=limit", "json", "l=label", "d=draft!", "jq", "A=author")
		if err != nil || len(pos) != 0 {
			return "", fmt.Errorf("gh pr list: %v %q", err, pos)
		}
		state := one(f, "state")
		if state == "" {
			state = "open"
		}
		var out []map[string]any
		for _, r := range s.Requests {
			if (one(f, "head") != "" && r.Head != one(f, "head")) || (one(f, "base") != "" && r.Base != one(f, "base")) || (state != "all" && r.State != state) {
				continue
			}
			full := map[string]any{
				"number": r.Number, "title": r.Title, "body": r.Body, "isDraft": r.Draft,
				"state": strings.ToUpper(r.State), "url": strings.TrimSpace(url(r)), "headRefName": r.Head, "baseRefName": r.Base,
			}
			labels := []map[string]any{}
			for _, l := range r.Labels {
				labels = append(labels, map[string]any{"name": l, "id": "L_" + l, "color": "", "description": ""})
			}
			full["labels"] = labels
			fields := strings.Split(one(f, "json"), ",")
			if one(f, "json") == "" {
				return "", fmt.Errorf("gh pr list: the stand-in answers --json only")
			}
			m := map[string]any{}
			for _, k := range fields {
				v, ok := full[k]
				if !ok {
					return "", fmt.Errorf("Unknown JSON field: %q", k)
				}
				m[k] = v
			}
			out = append(out, m)
		}
		if out == nil {
			out = []map[string]any{}
		}
		data, _ := json.Marshal(out)
		return string(data) + "\n", nil
	case "pr create":
		f, pos, err := flags(args[2:], "H=head", "B=base", "t=title", "b=body", "F=body-file", "l=label", "d=draft!", "f=fill!", "a=assignee", "r=reviewer")
		if err != nil || len(pos) != 0 {
			return "", fmt.Errorf("gh pr create: %v %q", err, pos)
		}
		for _, r := range s.Requests {
			if r.Head == one(f, "head") && r.Base == one(f, "base") && r.State == "open" {
				return "", fmt.Errorf("a pull request for branch %q into branch %q already exists:\n%s", r.Head, r.Base, url(r))
			}
		}
		body, err := readBody(f)
		if err != nil {
			return "", err
		}
		if one(f, "head") == "" || one(f, "base") == "" || one(f, "title") == "" {
			return "", fmt.Errorf("gh pr create: the bot must name --head, --base and --title")
		}
		for _, l := range splitLabels(f["label"]) {
			if !slices.Contains(s.Labels, l) {
				return "", fmt.Errorf("could not add label: '%s' not found", l)
			}
		}
		if len(body) > 65536 {
			return "", fmt.Errorf("GraphQL: Body is too long (maximum is 65536 characters) (createPullRequest)")
		}
		r := &request{Number: s.Next, Head: one(f, "head"), Base: one(f, "base"), Title: one(f, "title"), Body: body, Draft: one(f, "draft") != "", State: "open"}
		addLabels(r, splitLabels(f["label"]))
		s.Next++
		s.Requests = append(s.Requests, r)
		return url(r), nil
	case "pr edit":
		f, pos, err := flags(args[2:], "t=title", "b=body", "F=body-file", "add-label", "remove-label", "B=base")
		if err != nil || len(pos) != 1 {
			return "", fmt.Errorf("gh pr edit: %v %q", err, pos)
		}
		r, err := s.find(pos[0])
		if err != nil {
			return "", err
		}
		if t := one(f, "title"); t != "" {
			r.Title = t
		}
		if one(f, "body-file") != "" || one(f, "body") != "" {
			if r.Body, err = readBody(f); err != nil {
				return "", err
			}
		}
		for _, l := range splitLabels(f["add-label"]) {
			if !slices.Contains(s.Labels, l) {
				return "", fmt.Errorf("'%s' not found", l)
			}
		}
		addLabels(r, splitLabels(f["add-label"]))
		r.Labels = slices.DeleteFunc(r.Labels, func(l string) bool { return slices.Contains(splitLabels(f["remove-label"]), l) })
		return url(r), nil
	case "pr ready":
		f, pos, err := flags(args[2:], "undo!")
		if err != nil || len(pos) != 1 {
			return "", fmt.Errorf("gh pr ready: %v %q", err, pos)
		}
		r, err := s.find(pos[0])
		if err != nil {
			return "", err
		}
		r.Draft = one(f, "undo") != ""
		return "", nil
	case "pr close":
		f, pos, err := flags(args[2:], "c=comment", "d=delete-branch!")
		if err != nil || len(pos) != 1 {
			return "", fmt.Errorf("gh pr close: %v %q", err, pos)
		}
		r, err := s.find(pos[0])
		if err != nil {
			return "", err
		}
		if r.State != "open" {
			return "", fmt.Errorf("pull request #%d is already closed", r.Number)
		}
		r.State = "closed"
		if c := one(f, "comment"); c != "" {
			r.Comments = append(r.Comments, c)
		}
		return "", nil
	}
	return "", fmt.Errorf("gh: the stand-in has no %q", args[:2])
}

var draftPrefix = regexp.MustCompile(`(?i)^(\s*(?:draft:|wip:)\s*)*`)

// glab answers glab mr list/create/update/note/close. GitLab keeps the
// draft state in the title ("Draft: "), as the real server does.
func glab(s *forgeState, args []string) (string, error) {
	if len(args) < 2 || args[0] != "mr" {
		return "", fmt.Errorf("glab: unexpected %q", args)
	}
	setDraft := func(r *request, draft bool) {
		r.Title = draftPrefix.ReplaceAllString(r.Title, "")
		if draft {
			r.Title = "Draft: " + r.Title
		}
		r.Draft = draft
	}
	url := func(r *request) string {
		return fmt.Sprintf("https://gitlab.example.com/org/repo/-/merge_requests/%d\n", r.Number)
	}
	switch args[1] {
	case "list":
		f, pos, err := flags(args[2:], "s=source-branch", "t=target-branch", "A=all!", "c=closed!", "M=merged!", "F=output", "P=per-page", "p=page", "l=label")
		if err != nil || len(pos) != 0 {
			return "", fmt.Errorf("glab mr list: %v %q", err, pos)
		}
		if one(f, "output") != "json" {
			return "", fmt.Errorf("glab mr list: the stand-in answers --output json only")
		}
		out := []map[string]any{}
		for _, r := range s.Requests {
			if (one(f, "source-branch") != "" && r.Head != one(f, "source-branch")) || (one(f, "target-branch") != "" && r.Base != one(f, "target-branch")) {
				continue
			}
			if one(f, "all") == "" && r.State != "open" {
				continue
			}
			state := map[string]string{"open": "opened"}[r.State]
			if state == "" {
				state = r.State
			}
			labels := r.Labels
			if labels == nil {
				labels = []string{}
			}
			out = append(out, map[string]any{"iid": r.Number, "id": 1000 + r.Number, "title": r.Title, "description": r.Body, "labels": labels,
				"draft": r.Draft, "work_in_progress": r.Draft, "state": state, "source_branch": r.Head, "target_branch": r.Base, "web_url": strings.TrimSpace(url(r))})
		}
		data, _ := json.Marshal(out)
		return string(data) + "\n", nil
	case "create":
		f, pos, err := flags(args[2:], "s=source-branch", "b=target-branch", "t=title", "d=description", "l=label", "draft!", "wip!", "y=yes!", "f=fill!", "push!", "a=assignee", "remove-source-branch!")
		if err != nil || len(pos) != 0 {
			return "", fmt.Errorf("glab mr create: %v %q", err, pos)
		}
		if one(f, "yes") == "" || one(f, "title") == "" || one(f, "source-branch") == "" {
			return "", fmt.Errorf("--title or --fill required for non-interactive mode (and --yes, --source-branch for a bot)")
		}
		for _, r := range s.Requests {
			if r.Head == one(f, "source-branch") && r.Base == one(f, "target-branch") && r.State == "open" {
				return "", fmt.Errorf("409 Conflict: Another open merge request already exists for this source branch: !%d", r.Number)
			}
		}
		if len(one(f, "description")) > 1_048_576 {
			return "", fmt.Errorf("description is too long (maximum is 1048576 characters)")
		}
		r := &request{Number: s.Next, Head: one(f, "source-branch"), Base: one(f, "target-branch"), Title: one(f, "title"), Body: one(f, "description"), State: "open"}
		setDraft(r, one(f, "draft") != "" || one(f, "wip") != "")
		addLabels(r, splitLabels(f["label"]))
		s.Next++
		s.Requests = append(s.Requests, r)
		return "Creating merge request for " + r.Head + " into " + r.Base + "\n" + url(r), nil
	case "update":
		f, pos, err := flags(args[2:], "t=title", "d=description", "l=label", "u=unlabel", "draft!", "r=ready!", "wip!", "y=yes!", "target-branch")
		if err != nil || len(pos) != 1 {
			return "", fmt.Errorf("glab mr update: %v %q", err, pos)
		}
		r, err := s.find(pos[0])
		if err != nil {
			return "", err
		}
		draft := r.Draft
		if t := one(f, "title"); t != "" {
			// As glab does: the title given replaces the old one, draft
			// prefix and all, unless --draft or --ready says otherwise.
			r.Title = t
			draft = draftPrefix.FindString(t) != ""
		}
		if one(f, "draft") != "" {
			draft = true
		} else if one(f, "ready") != "" {
			draft = false
		}
		setDraft(r, draft)
		if d := one(f, "description"); d != "" {
			r.Body = d
		}
		addLabels(r, splitLabels(f["label"]))
		r.Labels = slices.DeleteFunc(r.Labels, func(l string) bool { return slices.Contains(splitLabels(f["unlabel"]), l) })
		return "- Updating merge request !" + pos[0] + "\n" + url(r), nil
	case "note":
		f, pos, err := flags(args[2:], "m=message", "unique!")
		if err != nil || len(pos) != 1 || one(f, "message") == "" {
			return "", fmt.Errorf("glab mr note: %v %q", err, pos)
		}
		r, err := s.find(pos[0])
		if err != nil {
			return "", err
		}
		r.Comments = append(r.Comments, one(f, "message"))
		return url(r), nil
	case "close":
		_, pos, err := flags(args[2:])
		if err != nil || len(pos) != 1 {
			return "", fmt.Errorf("glab mr close: %v %q", err, pos)
		}
		r, err := s.find(pos[0])
		if err != nil {
			return "", err
		}
		if r.State != "open" {
			return "", fmt.Errorf("merge request !%d is already closed", r.Number)
		}
		r.State = "closed"
		return "- Closing merge request...\n✓ Closed merge request !" + pos[0] + "\n", nil
	}
	return "", fmt.Errorf("glab: the stand-in has no mr %q", args[1])
}
