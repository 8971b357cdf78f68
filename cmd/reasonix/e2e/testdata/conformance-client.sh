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
auth/client-credentials-jwt)
	# The key comes as a JSON string: printf %b turns its \n back into lines.
	CONFORMANCE_PRIVATE_KEY=$(printf '%b' "$(ctx private_key_pem)") export CONFORMANCE_PRIVATE_KEY
	mcp call --oauth-grant client_credentials --oauth-client-id "$(ctx client_id)" \
		--oauth-private-key-env CONFORMANCE_PRIVATE_KEY --oauth-signing-algorithm "$(ctx signing_algorithm)" \
		--url "$url" test-tool ;;
auth/cross-app-access-complete-flow)
	CONFORMANCE_CLIENT_SECRET=$(ctx client_secret) export CONFORMANCE_CLIENT_SECRET
	CONFORMANCE_ID_TOKEN=$(ctx idp_id_token) export CONFORMANCE_ID_TOKEN
	mcp call --oauth-grant cross_app_access --oauth-client-id "$(ctx client_id)" \
		--oauth-client-secret-env CONFORMANCE_CLIENT_SECRET --oauth-idp-issuer "$(ctx idp_issuer)" \
		--oauth-idp-client-id "$(ctx idp_client_id)" --oauth-id-token-env CONFORMANCE_ID_TOKEN \
		--url "$url" test-tool ;;
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
