#!/usr/bin/env bash
# Installs what tierbench needs on a fresh Debian machine. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

need_go="$(sed -n 's/^go \([0-9.]*\).*/\1/p' go.mod)"
if ! command -v go >/dev/null 2>&1; then
	echo "setup: Go $need_go or newer is required (https://go.dev/dl/); Debian's golang-go is too old" >&2
	exit 1
fi
# Go modules come from the Go module proxy.
go mod download
