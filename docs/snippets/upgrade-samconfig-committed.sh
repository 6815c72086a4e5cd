git merge --abort 2>/dev/null || git rebase --abort 2>/dev/null || true   # if `git pull` stopped halfway
cp samconfig.toml samconfig.local.toml   # your answers, where `make deploy` reads them now
git fetch
git checkout @{upstream} -- samconfig.toml
git commit -m "samconfig.toml as upstream has it: my answers are in samconfig.local.toml" -- samconfig.toml
git pull --no-rebase --no-edit
