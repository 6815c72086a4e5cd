cp samconfig.toml samconfig.local.toml   # your answers, where `make deploy` reads them now
git checkout -- samconfig.toml           # the tracked file as the repository has it
git pull
