#!/usr/bin/env bash
# olm-cmp-upgrade-bot.sh: one pull request (GitHub) or merge request (GitLab)
# per application, opened or refreshed by a scheduled job.
#
# For each application directory (the arguments; by default every directory
# holding an olm-cmp.yaml on the base branch) the script runs
# `olm-cmp upgrade --write -o json DIR` in a scratch worktree of the base
# branch, commits what it wrote on the bot's own branch
# olm-cmp/upgrade/<dir-slug>, pushes it (--force-with-lease) and opens or
# refreshes one request whose body is `olm-cmp diff DIR --git-base BASE
# -o markdown`. The safety verdict is a label (olm-cmp:safe or
# olm-cmp:blocked); a bump blocked by a safety error is opened as a draft that
# says why. A run with nothing new pushes, opens and edits nothing. The
# checkout it runs in is never modified. deploy/bot/README.md has the details.
#
# Needs: bash, git, jq, olm-cmp, and gh (GitHub) or glab (GitLab), each
# authenticated (GH_TOKEN / GITLAB_TOKEN), and a checkout whose remote it may
# push to. Settings (environment):
#   OLM_CMP_BOT_FORGE    github or gitlab (default: gitlab under GitLab CI, else github)
#   OLM_CMP_BOT_BASE     base branch (default: CI_DEFAULT_BRANCH, else the remote's HEAD branch, else main)
#   OLM_CMP_BOT_REMOTE   remote to fetch from and push to (default: origin)
#   OLM_CMP_BOT_PREFIX   branch prefix (default: olm-cmp/upgrade/)
#   OLM_CMP_BOT_POLICY   passed to upgrade as --policy (olmv1 or olmv0) when set
#   OLM_CMP_BOT_UPGRADE_ARGS  more upgrade flags, split at spaces (e.g. --apps-from argocd/)
#   OLM_CMP_BOT_PROJECT  the Argo CD project (AppProject) of the Applications it bumps, passed to
#                        upgrade and diff as --project: with OLM_CMP_TENANCY_POLICY set to the
#                        cluster's tenancy policy (docs/tenancy.md), a bump the plugin would refuse
#                        that project is not proposed
#   OLM_CMP_BOT_STALE    close (default) or keep: the open request of an application that is now current
#   OLM_CMP_BOT_MAX_BODY the longest body, in bytes (default 65000: GitHub takes 65,536 characters)
#   OLM_CMP_BOT_LOG_URL  the job log, linked from every body (default: from GITHUB_* or CI_JOB_URL)
#   OLM_CMP_BOT_GIT_NAME, OLM_CMP_BOT_GIT_EMAIL  the bot's commit identity
# Exit status: 0 every application handled, 1 at least one failed (each
# failure is logged; the other applications are still handled), 2 usage.
set -euo pipefail

readonly me=olm-cmp-upgrade-bot
log() { printf '%s: %s\n' "$me" "$*" >&2; }
# prefixed copies stdin to stdout, each line after $1 (taken as text).
prefixed() { P=$1 awk '{ print ENVIRON["P"] $0 }'; }
die() { log "$*"; exit 2; }

if [ -n "${OLM_CMP_BOT_FORGE:-}" ]; then forge=$OLM_CMP_BOT_FORGE
elif [ -n "${GITLAB_CI:-}" ]; then forge=gitlab
else forge=github; fi
case $forge in
  github) cli=gh ;;
  gitlab) cli=glab ;;
  *) die "OLM_CMP_BOT_FORGE=$forge: use github or gitlab" ;;
esac
for tool in git jq olm-cmp "$cli"; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH: the bot needs git, jq, olm-cmp and $cli"
done

remote=${OLM_CMP_BOT_REMOTE:-origin}
prefix=${OLM_CMP_BOT_PREFIX:-olm-cmp/upgrade/}
stale=${OLM_CMP_BOT_STALE:-close}
case $stale in close|keep) ;; *) die "OLM_CMP_BOT_STALE=$stale: use close or keep" ;; esac
max_body=${OLM_CMP_BOT_MAX_BODY:-65000}
case $max_body in ''|*[!0-9]*) die "OLM_CMP_BOT_MAX_BODY=$max_body: give a number of bytes" ;; esac
[ "$max_body" -ge 2000 ] || die "OLM_CMP_BOT_MAX_BODY=$max_body: at least 2000 bytes, for the summary and the truncation note"
log_url=${OLM_CMP_BOT_LOG_URL:-}
if [ -z "$log_url" ] && [ -n "${GITHUB_RUN_ID:-}" ]; then
  log_url="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:-}/actions/runs/$GITHUB_RUN_ID"
elif [ -z "$log_url" ]; then
  log_url=${CI_JOB_URL:-}
fi
git_name=${OLM_CMP_BOT_GIT_NAME:-olm-cmp-bot}
git_email=${OLM_CMP_BOT_GIT_EMAIL:-olm-cmp-bot@users.noreply.localhost}
readonly label_safe=olm-cmp:safe label_blocked=olm-cmp:blocked

top=$(git rev-parse --show-toplevel 2>/dev/null) || die "run the bot inside a Git checkout (the repository holding the applications)"
cd "$top"
git remote get-url "$remote" >/dev/null 2>&1 || die "no Git remote $remote: set OLM_CMP_BOT_REMOTE"
base=${OLM_CMP_BOT_BASE:-${CI_DEFAULT_BRANCH:-}}
if [ -z "$base" ]; then
  base=$(git symbolic-ref --quiet --short "refs/remotes/$remote/HEAD" 2>/dev/null || true)
  base=${base#"$remote/"}
  # A CI checkout has no refs/remotes/origin/HEAD (actions/checkout sets
  # none): ask the remote which branch its HEAD is.
  [ -n "$base" ] || base=$(git ls-remote --symref "$remote" HEAD 2>/dev/null | sed -n 's#^ref: refs/heads/\(.*\)	HEAD$#\1#p' | head -n 1 || true)
  base=${base:-main}
fi
git check-ref-format "refs/heads/$base" || die "base branch $base is not a valid branch name"
git check-ref-format "refs/heads/${prefix}x" || die "branch prefix $prefix does not make valid branch names"

# The base branch and the bot's branches as the remote has them now.
# A shallow checkout (fetch-depth 1) is deepened to the whole history: below
# its cut the base's earlier commits would look like someone else's on the
# bot's branch (which is then never refreshed again).
unshallow=()
[ "$(git rev-parse --is-shallow-repository)" = true ] && unshallow=(--unshallow)
git fetch --quiet --prune "${unshallow[@]}" "$remote" "+refs/heads/$base:refs/remotes/$remote/$base" \
  "+refs/heads/$prefix*:refs/remotes/$remote/$prefix*" || die "git fetch $remote failed"
base_ref="refs/remotes/$remote/$base"
base_commit=$(git rev-parse --verify --quiet "$base_ref^{commit}") || die "$remote has no branch $base"

tmp=$(mktemp -d)
work="$tmp/worktree"
cleanup() {
  git worktree remove --force "$work" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
git worktree add --quiet --detach "$work" "$base_commit"
wgit() { git -C "$work" -c "user.name=$git_name" -c "user.email=$git_email" -c commit.gpgsign=false "$@"; }

failed=0
# The directories, one a line. ls-tree -z: without it Git quotes a path
# holding a non-ASCII byte, a quote or a backslash, whose olm-cmp.yaml would
# then match nothing and the application be skipped without a word. A name
# holding a line break cannot be one line: it is refused, named.
listed=$(if [ "$#" -gt 0 ]; then printf '%s\0' "$@"; else git ls-tree -r -z --name-only "$base_commit"; fi | tr '\n\0' '\001\n') ||
  die "listing the application directories of $base failed"
if [ "$#" -gt 0 ]; then
  dirs=$(printf '%s\n' "$listed" | sed -e 's#/*$##' -e 's#^\./##' -e 's#^$#.#')
else
  dirs=$(printf '%s\n' "$listed" | sed -n -e 's#^olm-cmp\.yaml$#.#p' -e 's#/olm-cmp\.yaml$##p')
fi
while IFS= read -r bad; do
  log "$(printf '%s' "$bad" | tr '\001' '?'): a directory name with a line break in it; rename it"
  failed=$((failed + 1))
done < <(printf '%s\n' "$dirs" | LC_ALL=C grep $'\001' || true)
dirs=$(printf '%s\n' "$dirs" | LC_ALL=C grep -v $'\001' | LC_ALL=C sort -u | sed '/^$/d' || true)
[ -n "$dirs" ] || { log "no application directories (no olm-cmp.yaml on $base)"; exit "$(( failed > 0 ))"; }

# md escapes a value from a bundle for a markdown table cell or line.
# clip bounds a value from a bundle (an olm.skipRange can be any length).
readonly jq_md='def clip: if length > 300 then .[:300] + " …" else . end; def md: clip | gsub("[\\x00-\\x1f\\x7f]"; "?") | gsub("&"; "&amp;") | gsub("<"; "&lt;") | gsub(">"; "&gt;") | gsub("(?<c>[\\\\`*_\\[\\]|#~])"; "\\\(.c)");'

# ---- the forge: list, create, update, close -------------------------------
# forge_list prints the bot branch's requests as
# [{number,title,body,labels:[..],draft,state:open|closed|merged,url}].
forge_list() {
  case $forge in
  github)
    gh pr list --head "$branch" --base "$base" --state all --limit 30 \
      --json number,title,body,labels,isDraft,state,url |
      jq -c '[.[] | {number, title, body, labels: [.labels[].name], draft: .isDraft, state: (.state | ascii_downcase), url}]' ;;
  gitlab)
    glab mr list --source-branch "$branch" --target-branch "$base" --all --output json |
      jq -c '[.[] | {number: .iid, title: (.title | sub("^(?i)(draft|wip):\\s*"; "")), body: (.description // ""), labels, draft, state: (if .state == "opened" then "open" else .state end), url: .web_url}]' ;;
  esac
}

ensure_labels() {
  [ "$forge" = github ] && [ ! -e "$tmp/labels" ] || return 0
  # gh pr create --label fails on a label the repository lacks; GitLab creates labels on use.
  gh label create "$label_safe" --color 0e8a16 --description "olm-cmp upgrade: no safety error" --force >/dev/null
  gh label create "$label_blocked" --color b60205 --description "olm-cmp upgrade: blocked by a safety error" --force >/dev/null
  : >"$tmp/labels"
}

forge_create() { # title body_file label draft(0|1)
  ensure_labels
  case $forge in
  github)
    local d=(); [ "$4" = 1 ] && d=(--draft)
    gh pr create --head "$branch" --base "$base" --title "$1" --body-file "$2" --label "$3" "${d[@]}" >&2 ;;
  gitlab)
    local d=(); [ "$4" = 1 ] && d=(--draft)
    glab mr create --source-branch "$branch" --target-branch "$base" --title "$1" --description "$(cat "$2")" \
      --label "$3" "${d[@]}" --yes >&2 ;;
  esac
}

forge_update() { # number title body_file label unlabel draft(0|1) draft_changed(0|1) text_changed(0|1)
  ensure_labels
  case $forge in
  github)
    local args=(pr edit "$1")
    [ "$8" = 1 ] && args+=(--title "$2" --body-file "$3")
    [ -n "$4" ] && args+=(--add-label "$4")
    [ -n "$5" ] && args+=(--remove-label "$5")
    [ "${#args[@]}" -gt 3 ] && gh "${args[@]}" >&2
    if [ "$7" = 1 ]; then
      if [ "$6" = 1 ]; then gh pr ready "$1" --undo >&2; else gh pr ready "$1" >&2; fi
    fi ;;
  gitlab)
    # GitLab keeps the draft state in the title: every update names it.
    local args=(mr update "$1" --title "$2")
    [ "$8" = 1 ] && args+=(--description "$(cat "$3")")
    [ -n "$4" ] && args+=(--label "$4")
    [ -n "$5" ] && args+=(--unlabel "$5")
    if [ "$6" = 1 ]; then args+=(--draft); else args+=(--ready); fi
    glab "${args[@]}" >&2 ;;
  esac
}

forge_close() { # number message
  case $forge in
  github) gh pr close "$1" --comment "$2" >&2 ;;
  gitlab) glab mr note "$1" --message "$2" >&2 && glab mr close "$1" >&2 ;;
  esac
}

# ---- the body --------------------------------------------------------------
# body_write DIR STATUS UPGRADE_JSON DIFF_MD DIFF_STATUS DIFF_ERR OUT
# DIFF_FLAGS (" --apps-from F…" diff was given, else empty): the
# request's body, at most max_body bytes. Its last line links the job log;
# comparisons leave that line out (it changes with every run).
body_write() {
  local dir=$1 status=$2 json=$3 diffmd=$4 diffst=$5 differr=$6 out=$7 diffflags=$8
  local reviewed=0; [ -n "$diffflags" ] && reviewed=1
  local head="$tmp/head.md" tail="$tmp/tail.md"
  {
    printf '<!-- %s: %s -->\n' "$me" "$(printf '%s' "$dir" | sed 's/--*/-/g; s/>/_/g')"
    printf '## olm-cmp upgrade: %s\n\n' "$(printf '%s' "$dir" | jq -Rr "$jq_md"' md')"
    if [ "$status" = 3 ]; then
      printf ':x: **Blocked by a safety error: this request is a draft so that it is not merged as it is.**\n\n'
      jq -r "$jq_md"' .applications[] | select(.status == "blocked") | "- \(.package // "" | md) \(.current // "" | md) -> \(.chosen // "" | md): \(.reason // "see the safety findings below" | md)"' "$json"
      printf '\nRead the safety findings below. To move to this version anyway, name each finding in the spec'"'"'s `acknowledge` (with the reason it is safe here) on %s: the next run checks the bump again. Or stay on the current version and close this request; the bot opens a new one for the next version.\n\n' "$(printf '%s' "$base" | jq -Rr "$jq_md"' md')"
      if jq -e 'any(.applications[]; .status == "blocked" and any(.safety.findings[]?; .rule == "upgradeEdge" and .severity == "error" and (.acknowledged // "") == ""))' "$json" >/dev/null; then
        printf 'An `upgradeEdge` error means the catalog (or the CSV) has no replaces, skips or skipRange path from the current version: move to a version it upgrades to first, or set `upgradeConstraintPolicy: SelfCertified` in the spec once you have checked this upgrade yourself (OLM v1'"'"'s way to say so).\n\n'
      fi
    elif jq -e 'any(.applications[]; .safety.verdict? == "warnings")' "$json" >/dev/null; then
      printf ':warning: **No safety error, but warnings: read them below.** Merging it makes Argo CD render and sync the new version; the plugin checks `upgradeFrom` again on that render.\n\n'
    else
      printf ':white_check_mark: **No safety error.** Merging it makes Argo CD render and sync the new version; the plugin checks `upgradeFrom` again on that render.\n\n'
    fi
    printf '| Application | Package | Current | Chosen | Status | Version kept in |\n|---|---|---|---|---|---|\n'
    jq -r "$jq_md"' .applications[] | "| \(.dir // "" | md) | \(.package // "" | md) | \(.current // "" | md) | \(.chosen // "" | md) | \(.status // "" | md) | \(.where // "olm-cmp.yaml" | md) |"' "$json"
    printf '\n'
    # Which upgradeConstraintPolicy judged the upgrade edge (OLM v1's field).
    jq -r "$jq_md"' .applications[] | select((.safety.upgradeConstraintPolicy? // "") != "") | "Upgrade edge of \(.dir // "" | md) judged under `upgradeConstraintPolicy` \(.safety.upgradeConstraintPolicy | md)" + (if .safety.upgradeConstraintPolicy == "SelfCertified" then " (the spec says a person checked the upgrade: a missing replaces, skips or skipRange edge is only a warning)." else " (the OLM v1 default: the new version must replace, skip or skip-range the current one)." end) + "\n"' "$json"
    # Without --apps-from, diff --git-base compares olm-cmp.yaml alone: a
    # version an Argo CD Application passes is not in it.
    [ "$reviewed" = 1 ] ||
      jq -r "$jq_md"' .applications[] | select((.where // "") != "" and (.where | test("olm-cmp\\.yaml$") | not)) | "Note: the version of \(.dir | md) is kept in \(.where | md), which olm-cmp diff --git-base does not read here: the review below compares olm-cmp.yaml alone.\n"' "$json"
    jq -r "$jq_md"' .applications[] | select((.candidates // []) | length > 0) | "Versions \(.package // "" | md) may move to (\((.candidates | length)), best first):\n" + ([.candidates[:20][] | "- \(.version // "" | md)" + (if ((.edges // []) | length) > 0 then " (\(.edges | join(", ") | md))" else "" end) + (if .deprecated == true then " **deprecated**" else "" end)] | join("\n")) + (if (.candidates | length) > 20 then "\n- … and \((.candidates | length) - 20) more (olm-cmp upgrade -o json)" else "" end) + "\n"' "$json"
    printf 'Files changed:'
    jq -r "$jq_md"' [.applications[] | (.files // [])[]] | unique | map(" \(md)") | join(",")' "$json"
    printf '\n'
  } >"$head"
  if [ "$diffst" -ge 3 ] || [ ! -s "$diffmd" ]; then
    {
      printf '### olm-cmp diff failed\n\n`%s` exited %s; the end of what it said (the job log has all of it):\n\n~~~text\n' \
        "olm-cmp diff $dir --git-base $base_ref$diffflags -o markdown" "$diffst"
      # In a ~~~ fence: a line of ~~~ from the message would close it.
      printf '%s\n' "$differr" | LC_ALL=C tr -d '\000-\010\013-\037\177' | sed 's/^\( *\)~~~/\1~ ~ ~/'
      printf '~~~\n'
    } >"$diffmd"
  fi
  {
    printf '\n---\n'
    printf '<sub>Opened by %s (olm-cmp upgrade --write, then olm-cmp diff --git-base %s). The bot owns the branch `%s`: it refreshes this request when a newer version appears, leaves it alone once someone else pushes to it, and closes it when the application is current.</sub>\n' \
      "$me" "$base_ref" "$branch"
    if [ -n "$log_url" ]; then printf '<sub>Job log: %s</sub>\n' "$log_url"; fi
  } >"$tail"
  # A summary too long for the body (many applications, long reasons) is
  # cut at a line too, leaving the review at least 1,000 bytes.
  local room=$(( max_body - $(wc -c <"$tail") - 1600 ))
  if [ "$(wc -c <"$head")" -gt "$room" ]; then
    LC_ALL=C awk -v room=$(( room - 200 )) '{ n += length($0) + 1; if (n > room) exit; print }' "$head" >"$head.cut"
    printf '\n:scissors: **The summary above is cut** to fit the request limit: `olm-cmp upgrade %s -o json` has all of it.\n' "$(printf '%s' "$dir" | jq -Rr "$jq_md"' md')" >>"$head.cut"
    mv "$head.cut" "$head"
  fi
  local budget=$(( max_body - $(wc -c <"$head") - $(wc -c <"$tail") ))
  {
    cat "$head"; printf '\n'
    if [ "$(wc -c <"$diffmd")" -le "$budget" ]; then
      cat "$diffmd"
    else
      # Cut whole lines, close a code fence and a <details> left open, and
      # say so (the job log's address is in the last line, which changes
      # with every run).
      # A fence is closed by a run of its character at least as long as
      # its opening (diff's fences grow past the backticks in the text).
      LC_ALL=C awk -v budget=$(( budget - 600 )) '
        { n += length($0) + 1; if (n > budget) exit; print
          if (fence == "") { if (match($0, /^(```+|~~~+)/)) fence = substr($0, RSTART, RLENGTH) }
          else { c = $0; sub(/[ \t]+$/, "", c); if (index(c, fence) == 1 && c ~ /^(`+|~+)$/) fence = "" }
          if (fence == "" && $0 ~ /<details>/) open++; if (fence == "" && $0 ~ /<\/details>/) open-- }
        END { if (fence != "") print fence; while (open-- > 0) print "</details>" }' "$diffmd"
      printf '\n:scissors: **The review above is cut at %s of its %s bytes** to fit the request limit. ' "$budget" "$(wc -c <"$diffmd")"
      if [ -n "$log_url" ]; then printf 'The whole `olm-cmp diff` output is in the job log (linked below).\n'
      else printf 'Run `%s` to see it whole.\n' "olm-cmp diff $dir --git-base $base$diffflags -o markdown"; fi
      log "$dir: the review is cut to fit the request body; the whole of it follows"
      cat "$diffmd" >&2
    fi
    cat "$tail"
  } >"$out"
}

# comparable drops what changes with every run (the job log line) and
# trailing white space, which forges may trim.
comparable() { awk '!/^<sub>Job log: / { sub(/[ \t\r]+$/, ""); lines[++n] = $0 } END { while (n > 0 && lines[n] == "") n--; for (i = 1; i <= n; i++) print lines[i] }'; }

# theirs SHA: whether the bot's branch at SHA holds a commit someone else
# made (then the branch is theirs: never force-pushed, never deleted). When
# Git cannot tell (history missing), the answer is yes.
theirs() {
  local who
  who=$(git log --format=%ce "$base_commit..$1") || return 0
  [ -n "$(printf '%s\n' "$who" | grep -vxF -e "$git_email" -e '' || true)" ]
}

# ---- one application -------------------------------------------------------
handle() {
  local dir=$1
  branch=$2
  # A directory named like a flag is passed as a path.
  local arg=$dir
  case $dir in -*) arg=./$dir ;; esac
  wgit checkout --quiet --force --detach "$base_commit"
  wgit clean --quiet -fd
  local json="$tmp/upgrade.json" status=0
  local policy=() extra=()
  [ -n "${OLM_CMP_BOT_POLICY:-}" ] && policy=(--policy "$OLM_CMP_BOT_POLICY")
  [ -n "${OLM_CMP_BOT_PROJECT:-}" ] && policy+=(--project "$OLM_CMP_BOT_PROJECT")
  read -r -a extra <<<"${OLM_CMP_BOT_UPGRADE_ARGS:-}"
  (cd "$work" && olm-cmp upgrade --write -o json "${policy[@]}" "${extra[@]}" "$arg") >"$json" 2>"$tmp/upgrade.err" || status=$?
  prefixed "$dir: " <"$tmp/upgrade.err" >&2
  case $status in
    0|2|3) jq -e '.applications | type == "array"' "$json" >/dev/null 2>&1 ||
             { log "$dir: olm-cmp upgrade exited $status without its JSON report"; return 1; } ;;
    *) log "$dir: olm-cmp upgrade failed (exit status $status); its request, if any, is left as it is"; return 1 ;;
  esac

  local prs; prs=$(forge_list) || { log "$dir: listing the requests of $branch failed"; return 1; }
  local open; open=$(jq -c '[.[] | select(.state == "open")][0] // empty' <<<"$prs")
  local remote_sha; remote_sha=$(git rev-parse --verify --quiet "refs/remotes/$remote/$branch^{commit}" || true)

  if [ "$status" = 0 ]; then
    log "$dir: current, nothing to move to"
    if [ -n "$open" ] && [ -n "$remote_sha" ] && theirs "$remote_sha"; then
      log "$dir: #$(jq -r .number <<<"$open") is left open: $branch has commits by someone else"
    elif [ -n "$open" ] && [ "$stale" = close ]; then
      local n; n=$(jq -r .number <<<"$open")
      forge_close "$n" "Closed by $me: \`$dir\` on $base is current (olm-cmp upgrade has nothing to move to), so this bump is no longer needed."
      if [ -n "$remote_sha" ]; then
        git push --quiet --force-with-lease="refs/heads/$branch:$remote_sha" "$remote" ":refs/heads/$branch" ||
          log "$dir: could not delete the branch $branch"
      fi
      log "$dir: closed #$n ($branch), which is no longer needed"
    elif [ -n "$open" ]; then
      log "$dir: #$(jq -r .number <<<"$open") is left open (OLM_CMP_BOT_STALE=keep)"
    fi
    return 0
  fi

  local blocked=0 label=$label_safe unlabel=$label_blocked
  if [ "$status" = 3 ] || jq -e 'any(.applications[]; .status == "blocked")' "$json" >/dev/null; then
    blocked=1 label=$label_blocked unlabel=$label_safe
  fi
  if [ -z "$(wgit status --porcelain --untracked-files=all)" ]; then
    log "$dir: olm-cmp upgrade reported a bump (exit status $status) but changed no file; nothing to commit"
    return 1
  fi

  local title
  title=$(jq -r --arg dir "$dir" '[.applications[] | select(.status == "written" or .status == "blocked" or .status == "available")] |
      if length == 1 then "olm-cmp: upgrade \(.[0].package // "?") \(.[0].current // "?") -> \(.[0].chosen // "?") (\($dir))"
      else "olm-cmp: upgrade \(length) applications in \($dir)" end | gsub("[\\x00-\\x1f\\x7f]"; "") | .[:200]' "$json")
  # (cut by characters in jq: cut -c cuts bytes, and half a character comes
  # back from the forge as U+FFFD: a title that never matches, edited on
  # every run and reopened when a person closed it)

  # A request a person closed without merging is not reopened for the same bump.
  if [ -z "$open" ] && jq -e --arg t "$title" 'any(.[]; .state != "open" and .title == $t)' <<<"$prs" >/dev/null; then
    log "$dir: \"$title\" was closed without being merged; not reopened (a newer version opens a new request)"
    return 0
  fi
  # A branch someone else pushed to is theirs now.
  if [ -n "$remote_sha" ] && theirs "$remote_sha"; then
    log "$dir: $branch has commits by someone else; left as it is"
    return 0
  fi

  wgit add -A
  wgit commit --quiet --no-verify -m "$title" -m "$(jq -r '.applications[] | "\(.dir // ""): \(.package // "") \(.current // "") -> \(.chosen // "") (\(.status // ""))\(if (.reason // "") != "" then ": \(.reason)" else "" end)"' "$json")" -m "Written by $me with olm-cmp upgrade --write."
  local commit; commit=$(git -C "$work" rev-parse HEAD)

  # Push unless the branch already holds this bump: the paths either side
  # changed since the base are the same.
  local same=0 paths=()
  if [ -n "$remote_sha" ]; then
    mapfile -t paths < <({ git diff --name-only "$base_commit" "$commit"; git diff --name-only "$base_commit...$remote_sha"; } | LC_ALL=C sort -u)
    if git diff --quiet "$remote_sha" "$commit" -- "${paths[@]}"; then same=1; fi
  fi
  if [ "$same" = 1 ]; then
    log "$dir: $branch already holds this bump"
  else
    git push --quiet --force-with-lease="refs/heads/$branch:$remote_sha" "$remote" "$commit:refs/heads/$branch" ||
      { log "$dir: pushing $branch failed"; return 1; }
    log "$dir: pushed $branch ($title)"
  fi

  # The manifests upgrade read the version from: OLM_CMP_BOT_UPGRADE_ARGS'
  # --apps-from, else the files its report names (where), so the review
  # renders the version the Application passes, at the base and now.
  local apps=() diffapps=() i
  for ((i = 0; i < ${#extra[@]}; i++)); do
    case ${extra[i]} in
      --apps-from) [ $((i + 1)) -lt ${#extra[@]} ] && apps+=("${extra[i + 1]}") ;;
      --apps-from=*) apps+=("${extra[i]#--apps-from=}") ;;
    esac
  done
  if [ ${#apps[@]} = 0 ]; then
    mapfile -t apps < <(jq -r '[.applications[] | (.where // "") | scan("\\(([^()]+):[0-9]+\\)") | .[0]] | unique | .[]' "$json")
  fi
  for i in "${apps[@]}"; do
    [ "$i" = none ] || diffapps+=(--apps-from "$i")
  done
  local diffmd="$tmp/diff.md" diffst=0
  local project=()
  [ -n "${OLM_CMP_BOT_PROJECT:-}" ] && project=(--project "$OLM_CMP_BOT_PROJECT")
  (cd "$work" && olm-cmp diff "$arg" --git-base "$base_ref" "${diffapps[@]}" "${project[@]}" -o markdown) >"$diffmd" 2>"$tmp/diff.err" || diffst=$?
  if [ "$diffst" -ge 3 ]; then prefixed "$dir: olm-cmp diff: " <"$tmp/diff.err" >&2; fi
  # Its error: stderr less the render's findings (warning: and required:
  # lines, which diff prints for a render that succeeded).
  local differr; differr=$(grep -v -e '^warning:' -e '^required:' "$tmp/diff.err" | tail -n 20 | cut -c1-500 || true)
  body_write "$dir" "$([ "$blocked" = 1 ] && echo 3 || echo 2)" "$json" "$diffmd" "$diffst" "$differr" "$tmp/body.md" \
    "${diffapps[*]:+ ${diffapps[*]}}"

  if [ -z "$open" ]; then
    forge_create "$title" "$tmp/body.md" "$label" "$blocked"
    log "$dir: opened a $([ "$blocked" = 1 ] && echo 'draft ' || true)request for $branch labelled $label"
    return 0
  fi
  local n text=0 draft_changed=0 add= remove=
  n=$(jq -r .number <<<"$open")
  if [ "$(jq -r .title <<<"$open")" != "$title" ] ||
     [ "$(jq -r .body <<<"$open" | comparable)" != "$(comparable <"$tmp/body.md")" ]; then text=1; fi
  jq -e --arg l "$label" 'any(.labels[]; . == $l)' <<<"$open" >/dev/null || add=$label
  jq -e --arg l "$unlabel" 'any(.labels[]; . == $l)' <<<"$open" >/dev/null && remove=$unlabel
  [ "$(jq -r 'if .draft then 1 else 0 end' <<<"$open")" = "$blocked" ] || draft_changed=1
  if [ "$text" = 0 ] && [ -z "$add$remove" ] && [ "$draft_changed" = 0 ]; then
    log "$dir: #$n is up to date"
    return 0
  fi
  forge_update "$n" "$title" "$tmp/body.md" "$add" "$remove" "$blocked" "$draft_changed" "$text"
  log "$dir: refreshed #$n ($title)"
}

# slug: a directory as one branch name component.
slug() {
  if [ "$1" = . ]; then echo root; return; fi
  printf '%s' "$1" | LC_ALL=C tr 'A-Z/' 'a-z-' |
    LC_ALL=C sed -e 's/[^a-z0-9._-]/-/g' -e 's/\.\.*/./g' -e 's/^[.-]*//' -e 's/[.-]*$//' -e 's/\.lock$/-lock/' -e 's/^$/app/'
}
seen=" "
while IFS= read -r dir; do
  b="$prefix$(slug "$dir")"
  case $seen in *" $b "*)
    log "$dir: its branch $b is another application's: rename one of the two directories"
    failed=$((failed + 1)); continue ;;
  esac
  seen="$seen$b "
  git check-ref-format "refs/heads/$b" || { log "$dir: $b is not a valid branch name"; failed=$((failed + 1)); continue; }
  # In a child shell, so that set -e stops at the first failing command of
  # this application (a function called from a || list would run on).
  handle "$dir" "$b" </dev/null &
  wait $! || failed=$((failed + 1))
done <<<"$dirs"

# The bot's branches of applications no longer on the base branch (their
# directory removed or renamed): their open requests are closed, as for a
# current application. Only when the run covers every application.
if [ "$#" -eq 0 ] && [ "$stale" = close ]; then
  while IFS=' ' read -r gone sha; do
    branch=${gone#"refs/remotes/$remote/"}
    case $seen in *" $branch "*) continue ;; esac
    if theirs "$sha"; then log "$branch: has commits by someone else; left as it is"; continue; fi
    prs=$(forge_list) || { log "$branch: listing its requests failed"; failed=$((failed + 1)); continue; }
    for n in $(jq -r '.[] | select(.state == "open") | .number' <<<"$prs"); do
      forge_close "$n" "Closed by $me: no directory on $base holds this application's olm-cmp.yaml any more." ||
        { failed=$((failed + 1)); continue; }
      log "$branch: closed #$n, whose application is no longer on $base"
    done
    git push --quiet --force-with-lease="refs/heads/$branch:$sha" "$remote" ":refs/heads/$branch" ||
      log "$branch: could not delete the branch"
  done < <(git for-each-ref --format="%(refname) %(objectname)" "refs/remotes/$remote/${prefix}*")
fi

if [ "$failed" -gt 0 ]; then
  log "$failed application(s) failed: see the lines above"
  exit 1
fi
