package bot

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestJobFiles: the ready-to-copy jobs run the bot's script with what it
// needs: the base branch's history, the rights to push and open requests,
// a token for gh or glab, and the bot's commit identity (which the script
// compares with a branch's committers to leave a person's pushes alone).
func TestJobFiles(t *testing.T) {
	const scriptPath = "deploy/bot/olm-cmp-upgrade-bot.sh"
	if _, err := os.Stat(root + "/" + scriptPath); err != nil {
		t.Fatal(err)
	}
	var gh struct {
		// YAML 1.1, which sigs.k8s.io/yaml reads, takes the key on for
		// true; GitHub reads it as "on".
		On          map[string]any    `json:"true"`
		Permissions map[string]string `json:"permissions"`
		Jobs        map[string]struct {
			Env   map[string]string `json:"env"`
			Steps []struct {
				Uses string            `json:"uses"`
				With map[string]any    `json:"with"`
				Run  string            `json:"run"`
				Env  map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	data, err := os.ReadFile(root + "/deploy/bot/github-workflow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &gh); err != nil {
		t.Fatalf("github-workflow.yaml: %v", err)
	}
	if gh.On["schedule"] == nil || gh.Permissions["contents"] != "write" || gh.Permissions["pull-requests"] != "write" {
		t.Errorf("github-workflow.yaml: on %v, permissions %v; want a schedule and contents, pull-requests write", gh.On, gh.Permissions)
	}
	job, ok := gh.Jobs["upgrade"]
	if !ok || job.Env["GH_TOKEN"] == "" || job.Env["OLM_CMP_BOT_BASE"] == "" {
		t.Fatalf("github-workflow.yaml: job upgrade with GH_TOKEN and OLM_CMP_BOT_BASE: %+v", gh.Jobs)
	}
	var checkout, bot bool
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["fetch-depth"] == float64(0) {
			checkout = true
		}
		if strings.Contains(s.Run, scriptPath) && strings.Contains(s.Run, "OLM_CMP_BOT_GIT_EMAIL=") && strings.Contains(s.Run, "go mod download -json \"github.com/olm-cmp/olm-cmp@${OLM_CMP_VERSION}\"") {
			bot = true
		}
	}
	if !checkout || !bot {
		t.Errorf("github-workflow.yaml: checkout with fetch-depth 0: %v; a step running %s of OLM_CMP_VERSION with the bot's identity: %v", checkout, scriptPath, bot)
	}

	var gl map[string]struct {
		Image     string           `json:"image"`
		Rules     []map[string]any `json:"rules"`
		Variables map[string]any   `json:"variables"`
		Script    []string         `json:"script"`
		Resource  string           `json:"resource_group"`
	}
	if data, err = os.ReadFile(root + "/deploy/bot/gitlab-ci.yml"); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &gl); err != nil {
		t.Fatalf("gitlab-ci.yml: %v", err)
	}
	j, ok := gl["olm-cmp-upgrade"]
	if !ok || j.Variables["GIT_DEPTH"] != float64(0) || j.Variables["GITLAB_TOKEN"] == nil || j.Variables["OLM_CMP_BOT_GIT_EMAIL"] == nil || j.Resource == "" {
		t.Fatalf("gitlab-ci.yml: job olm-cmp-upgrade with GIT_DEPTH 0, GITLAB_TOKEN, the bot's identity and a resource group: %+v", gl)
	}
	script := strings.Join(j.Script, "\n")
	for _, want := range []string{"apk add --no-cache bash git jq glab", scriptPath, "go install \"github.com/olm-cmp/olm-cmp/cmd/...@${OLM_CMP_VERSION}\""} {
		if !strings.Contains(script, want) {
			t.Errorf("gitlab-ci.yml's script lacks %q:\n%s", want, script)
		}
	}
	if len(j.Rules) == 0 || !strings.Contains(j.Rules[0]["if"].(string), `"schedule"`) {
		t.Errorf("gitlab-ci.yml: the job's first rule is not the schedule: %v", j.Rules)
	}
}
