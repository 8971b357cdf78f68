#!/bin/sh
# The client under test of the MCP conformance suite: the suite runs
# "conformance-client.sh <server-url>" with the scenario in
# MCP_CONFORMANCE_SCENARIO (and its data in MCP_CONFORMANCE_CONTEXT), and
# this script does what the scenario asks through `reasonix mcp`.
# REASONIX_BIN names the reasonix binary.
set -eu
url=$1
bin=${REASONIX_BIN:?REASONIX_BIN names the reasonix binary}
mcp() { exec "$bin" mcp "$@"; }

# ctx KEY prints a string member of MCP_CONFORMANCE_CONTEXT.
ctx() {
	printf '%s' "${MCP_CONFORMANCE_CONTEXT:-}" | sed -n "s/.*\"$1\" *: *\"\([^\"]*\)\".*/\1/p"
}

case ${MCP_CONFORMANCE_SCENARIO:-} in
tools_call)
	mcp call --url "$url" add_numbers '{"a":5,"b":3}' ;;
elicitation-sep1034-client-defaults)
	mcp call --mcp-elicitation defaults --url "$url" test_client_elicitation_defaults ;;
sse-retry)
	mcp call --url "$url" test_reconnection ;;
auth/client-credentials-basic)
	CONFORMANCE_CLIENT_SECRET=$(ctx client_secret) export CONFORMANCE_CLIENT_SECRET
	mcp call --oauth-grant client_credentials --oauth-client-id "$(ctx client_id)" \
		--oauth-client-secret-env CONFORMANCE_CLIENT_SECRET --url "$url" test-tool ;;
auth/*)
	id=$(ctx client_id)
	if [ -n "$id" ]; then
		CONFORMANCE_CLIENT_SECRET=$(ctx client_secret) export CONFORMANCE_CLIENT_SECRET
		mcp call --oauth-authorize fetch --oauth-client-id "$id" \
			--oauth-client-secret-env CONFORMANCE_CLIENT_SECRET --url "$url" test-tool
	fi
	mcp call --oauth-authorize fetch --url "$url" \
		--oauth-client-metadata-url https://conformance-test.local/client-metadata.json test-tool ;;
*)
	# initialize and anything unknown: connect, list the tools, leave.
	mcp tools --url "$url" ;;
esac
