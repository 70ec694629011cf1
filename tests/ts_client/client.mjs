// Drives `mcp-multi-gmail --demo` with an official TypeScript MCP client: SDK 1.x or the v2 client.
//
// Usage: node client.mjs 1|2 [server command...]   (default: uv run mcp-multi-gmail --demo)
// `1` is `@modelcontextprotocol/sdk` 1.x (the 2025-11-25 handshake, `initialize`); `2` is
// `@modelcontextprotocol/client` 2.x in its `auto` mode, which probes with `server/discover` and
// speaks the stateless revision 2026-07-28 when the server answers it.
// Calls every tool at least once successfully and many times with errors. Both clients'
// callTool validate structuredContent against each tool's outputSchema (1.x even on
// error results), so a call that throws means the server sent something this client cannot
// read. Prints one JSON summary line on stdout (with the protocol the connection negotiated);
// exits 1 on the first failed expectation.
import assert from "node:assert/strict";

const [sdk, ...argv] = process.argv.slice(2);
assert.ok(sdk === "1" || sdk === "2", `the first argument is the SDK: 1 or 2, not ${sdk}`);
const [command, ...args] = argv.length > 0 ? argv : ["uv", "run", "mcp-multi-gmail", "--demo"];
const { Client } = await import(sdk === "1" ? "@modelcontextprotocol/sdk/client/index.js" : "@modelcontextprotocol/client");
const { StdioClientTransport, getDefaultEnvironment } = await import(
  sdk === "1" ? "@modelcontextprotocol/sdk/client/stdio.js" : "@modelcontextprotocol/client/stdio"
);

// The SDKs pass only a few variables on by default; the demo needs TMPDIR (where its folder goes).
const env = { ...getDefaultEnvironment() };
for (const name of ["TMPDIR", "UV_CACHE_DIR", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"]) {
  if (process.env[name]) env[name] = process.env[name];
}
const transport = new StdioClientTransport({ command, args, env, stderr: "inherit" });
// 1.x keeps the negotiated revision to itself; it hands it to a transport that asks (as HTTP does).
let negotiated = null;
transport.setProtocolVersion ??= (version) => (negotiated = version);
const options = sdk === "1" ? {} : { versionNegotiation: { mode: "auto" } };
const client = new Client({ name: "mcp-multi-gmail-ts-test", version: "1.0.0" }, options);

const succeeded = new Set();
const errors = [];

function daysAgo(days) {
  return new Date(Date.now() - days * 86400000).toISOString().slice(0, 10);
}
const invitationId = "ctenarsky-klub.pozvanka@example.org"; // the demo seed's weekly invitation (-40d)

function parseError(tool, result) {
  assert.equal(result.isError, true, `${tool}: expected an error, got ${JSON.stringify(result).slice(0, 300)}`);
  assert.equal(result.structuredContent, undefined, `${tool}: an error result must carry no structuredContent`);
  assert.equal(result.content.length, 1, `${tool}: one text content item`);
  assert.equal(result.content[0].type, "text");
  const text = result.content[0].text;
  assert.ok(!text.includes("\n"), `${tool}: compact JSON expected, got ${text.slice(0, 200)}`);
  const body = JSON.parse(text);
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "retryable"]);
  assert.equal(typeof body.error.message, "string");
  assert.equal(typeof body.error.retryable, "boolean");
  return body.error;
}

async function ok(tool, args) {
  const result = await client.callTool({ name: tool, arguments: args });
  assert.notEqual(result.isError, true, `${tool}: ${result.content?.[0]?.text}`);
  assert.ok(result.structuredContent, `${tool}: structuredContent expected`);
  const text = result.content[0].text;
  assert.deepEqual(JSON.parse(text), result.structuredContent, `${tool}: text and structuredContent differ`);
  assert.ok(!text.includes("\n  "), `${tool}: the text content must be compact JSON`);
  succeeded.add(tool);
  return result.structuredContent;
}

// `words`: fragments the message must contain (argument names, expectations).
async function fails(tool, args, code, words = []) {
  const result = await client.callTool({ name: tool, arguments: args });
  const error = parseError(tool, result);
  assert.equal(error.code, code, `${tool} ${JSON.stringify(args).slice(0, 120)}: ${error.message}`);
  for (const word of words) {
    assert.ok(error.message.includes(word), `${tool}: ${JSON.stringify(word)} missing from ${error.message}`);
  }
  assert.ok(!/https?:\/\//.test(error.message), `${tool}: no URLs in error messages: ${error.message}`);
  errors.push({ tool, code });
  return error;
}

await client.connect(transport);
try {
  const tools = (await client.listTools()).tools;
  assert.equal(tools.length, 24);
  for (const tool of tools) assert.ok(tool.outputSchema, `${tool.name} declares an output schema`);

  // ---------------------------------------------------------------- every tool, successfully
  const accounts = await ok("mg_list_accounts", { verify: true });
  assert.deepEqual(accounts.failures, []);
  await ok("mg_reload_config", {});
  const pass = await ok("mg_next_pass", { account: "osobni", since: daysAgo(5) });
  assert.equal(pass.threads.length, 9);
  const cottage = pass.threads.find((t) => t.subject.startsWith("Chata na Vysočině"));
  const found = await ok("mg_search_threads", { account: "all", query: "newer_than:30d", max_results: 50 });
  assert.ok(found.threads.length > 0);
  const thread = await ok("mg_get_thread", { account: "osobni", thread_id: cottage.thread_id });
  assert.equal(thread.messages.length, 9);
  const invoice = await ok("mg_get_message", {
    account: "osobni",
    message_id: "faktura-2026-11.202611@rychlynet.example.com",
  });
  const pdf = invoice.attachments.find((a) => a.filename === "faktura-2026-11.pdf");
  const saved = await ok("mg_get_attachment", {
    account: "osobni",
    message_id: invoice.message_id,
    attachment_id: pdf.attachment_id,
  });
  assert.ok(saved.size_bytes > 0);
  const labels = await ok("mg_list_labels", { account: "osobni" });
  assert.ok(labels.labels.some((l) => l.label === "Asistent"));
  const newest = "chata-vysocina-09@example.org";
  const labelled = await ok("mg_label_message", { account: "osobni", message_ids: [newest], label: "Asistent" });
  assert.equal(labelled.messages[0].outcome, "changed");
  await ok("mg_unlabel_message", { account: "osobni", message_ids: [newest], label: "Asistent" });
  await ok("mg_label_thread", { account: "osobni", thread_id: cottage.thread_id, label: "Asistent/čeká" });
  await ok("mg_unlabel_thread", { account: "osobni", thread_id: cottage.thread_id, label: "Asistent/čeká" });
  const flags = await ok("mg_set_flags", { account: "osobni", message_id: newest, seen: true, flagged: false });
  assert.ok(flags.flags_after.includes("\\Seen"));
  const text = { to: ["lucie@example.org"], subject: "Chata: jedeme v pátek", body: "Ahoj, jedeme v pátek v pět." };
  const draft = await ok("mg_save_draft", { account: "osobni", ...text, in_reply_to: newest });
  await ok("mg_list_drafts", { account: "osobni" });
  const sent = await ok("mg_send_message", {
    account: "osobni",
    ...text,
    in_reply_to: newest,
    quote_original: false,
    signature: false,
  });
  assert.deepEqual(sent.accepted, ["lucie@example.org"]);
  const lists = await ok("mg_list_subscriptions", { account: "osobni" });
  const weekly = lists.subscriptions.find((s) => s.list_id === "weekly.weeklybyte.example.com");
  assert.equal(weekly.one_click, true);
  const plan = await ok("mg_unsubscribe", { account: "osobni", message_id: weekly.message_id, method: "mailto", dry_run: true });
  assert.equal(plan.mailto.to, "unsubscribe@weeklybyte.example.com");
  const trashed = await ok("mg_trash_message", { account: "osobni", message_id: draft.message_id });
  assert.equal(trashed.moved, true);
  const undone = await ok("mg_undo", { account: "osobni", undo_token: trashed.undo_token });
  assert.equal(undone.restored, 1);
  const sweep = { account: "osobni", query: "newer_than:30d", change: { flagged: true } };
  const preview = await ok("mg_sweep", sweep);
  assert.ok(preview.matched_messages > 0 && preview.sample.length > 0);
  const swept = await ok("mg_sweep", { ...sweep, confirm_token: preview.confirm_token });
  assert.equal(swept.undo_token, preview.undo_token);
  // Follow-ups: Jana's own sent mail nobody has answered yet; a reminder set on one, then undone.
  const waiting = await ok("mg_awaiting_replies", { account: "osobni", older_than_days: 0 });
  assert.ok(waiting.threads.length > 0 && waiting.threads.every((t) => t.reminder === null));
  const owed = waiting.threads[0];
  assert.ok(owed.owed_by.length > 0 && owed.days_waiting >= 0);
  const on = daysAgo(-7);
  const reminded = await ok("mg_remind", { account: "osobni", thread_id: owed.thread_id, on });
  assert.equal(reminded.reminder.on, on);
  assert.equal(reminded.added.length, 1);
  const shown = await ok("mg_awaiting_replies", { account: "osobni", older_than_days: 0 });
  assert.equal(shown.threads.find((t) => t.thread_id === owed.thread_id).reminder.on, on);
  await ok("mg_undo", { account: "osobni", undo_token: reminded.undo_token });
  const after = await ok("mg_awaiting_replies", { account: "osobni", older_than_days: 0 });
  assert.equal(after.threads.find((t) => t.thread_id === owed.thread_id).reminder, null);
  // The invitation: read, then answered to its organizer (allowed: @example.org).
  const invited = await ok("mg_get_message", { account: "osobni", message_id: invitationId });
  assert.equal(invited.invitation.organizer.address, "hana.svobodova@example.org");
  const answered = await ok("mg_respond_invitation", {
    account: "osobni",
    message_id: invitationId,
    response: "accepted",
    comment: "Přijdu, kdykoli to půjde.",
  });
  assert.equal(answered.organizer, "hana.svobodova@example.org");
  assert.equal(answered.attendee, "jana.novakova@example.cz");
  assert.equal(answered.occurrence, null);
  assert.deepEqual(answered.sent.accepted, ["hana.svobodova@example.org"]);

  // ---------------------------------------------------------------- errors, each readable
  // Domain errors.
  await fails("mg_list_labels", { account: "nobody" }, "account_unknown", ["nobody"]);
  await fails("mg_get_thread", { account: "osobni", thread_id: "1" }, "not_found");
  await fails("mg_get_message", { account: "osobni", message_id: "no-such-message@example.cz" }, "not_found");
  await fails("mg_label_message", { account: "osobni", message_ids: [newest], label: "Rodina" }, "label_forbidden");
  await fails("mg_label_thread", { account: "osobni", thread_id: cottage.thread_id, label: "Asistent" }, "label_forbidden");
  await fails("mg_set_flags", { account: "osobni", message_id: newest }, "invalid_input");
  await fails("mg_unsubscribe", { account: "osobni", message_id: newest, method: "mailto" }, "unsubscribe_refused");
  await fails("mg_unsubscribe", { account: "tym", message_id: newest, method: "one_click" }, "unsubscribe_refused");
  await fails("mg_undo", { account: "osobni", undo_token: trashed.undo_token }, "invalid_input", ["already used"]);
  await fails("mg_sweep", { ...sweep, change: { add_label: "\\Inbox" } }, "label_forbidden");
  await fails("mg_next_pass", { account: "osobni", since: "last tuesday" }, "invalid_input");
  await fails("mg_remind", { account: "osobni", thread_id: owed.thread_id, on: daysAgo(3) }, "invalid_input", ["on"]);
  await fails("mg_remind", { account: "osobni", thread_id: owed.thread_id, on, clear: true }, "invalid_input");
  await fails("mg_remind", { account: "osobni", thread_id: "1", on }, "not_found");
  await fails("mg_respond_invitation", { account: "osobni", message_id: newest, response: "accepted" }, "invalid_input", [
    "not an invitation",
    "Nothing was sent",
  ]);
  await fails("mg_respond_invitation", { account: "osobni", message_id: invitationId, response: "maybe" }, "invalid_input", ["response"]);
  await fails("mg_respond_invitation", { account: "tym", message_id: invitationId, response: "declined" }, "not_found", ["tym"]);
  await fails("mg_awaiting_replies", { account: "nobody" }, "account_unknown", ["nobody"]);
  await fails("mg_awaiting_replies", { account: "osobni", within_days: 0 }, "invalid_input", ["within_days"]);
  await fails("mg_search_threads", { account: "osobni", query: "x", page_token: "garbage" }, "invalid_input");
  await fails("mg_send_message", { account: "osobni", to: ["someone@elsewhere.example.net"], subject: "Hi", body: "x" }, "send_forbidden");
  await fails("mg_send_message", { account: "tym", to: ["anna@example.com"], subject: "Hi", body: "x" }, "send_forbidden");
  const again = { account: "osobni", ...text, in_reply_to: newest, quote_original: false, signature: false };
  await fails("mg_send_message", again, "duplicate_send");
  // A string must never unlock the second send.
  await fails("mg_send_message", { ...again, repeat: "yes" }, "invalid_input", ["repeat", "true or false", "string"]);
  await fails("mg_send_message", { ...again, repeat: 1 }, "invalid_input", ["repeat"]);
  // Missing arguments.
  await fails("mg_list_labels", {}, "invalid_input", ["account", "missing"]);
  // (a reply may leave the subject out, so a subject alone is the call missing two arguments)
  await fails("mg_send_message", { account: "osobni", subject: "Hi" }, "invalid_input", ["to", "body"]);
  // Wrong types.
  await fails("mg_list_accounts", { verify: "yes" }, "invalid_input", ["verify"]);
  await fails("mg_set_flags", { account: "osobni", message_id: newest, seen: "yes" }, "invalid_input", ["seen"]);
  await fails("mg_search_threads", { account: "osobni", query: "x", max_results: "many" }, "invalid_input", ["max_results"]);
  await fails("mg_search_threads", { account: "osobni", query: "x", max_results: 0 }, "invalid_input", ["max_results"]);
  await fails("mg_label_message", { account: "osobni", message_ids: newest, label: "Asistent" }, "invalid_input", ["message_ids"]);
  await fails("mg_get_thread", { account: 42, thread_id: cottage.thread_id }, "invalid_input", ["account"]);
  // Oversized input, refused before any connection.
  await fails("mg_search_threads", { account: "osobni", query: "a".repeat(2_000_000) }, "invalid_input", ["query", "characters"]);
  await fails("mg_save_draft", { account: "osobni", to: ["a@example.cz"], subject: "s".repeat(100_000), body: "x" }, "invalid_input", ["subject"]);
  // Unknown extra arguments are ignored, as in the original.
  await ok("mg_list_labels", { account: "tym", colour: "blue" });
  // The refusals sent nothing: exactly one copy of the reply is in Sent (polled: Gmail's search
  // index may lag behind the filing).
  const query = { account: "osobni", query: "in:sent subject:(Chata jedeme)" };
  let copies = await ok("mg_search_threads", query);
  for (const deadline = Date.now() + 30_000; copies.threads.length === 0 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    copies = await ok("mg_search_threads", query);
  }
  assert.equal(copies.threads.length, 1);
  assert.equal(copies.threads[0].matched_messages, 1);

  assert.equal(succeeded.size, 24, `tools never called successfully: ${tools.map((t) => t.name).filter((n) => !succeeded.has(n))}`);
  assert.ok(errors.length >= 30);
  const protocol = client.getNegotiatedProtocolVersion?.() ?? negotiated;
  process.stdout.write(JSON.stringify({ succeeded: [...succeeded].sort(), errors, protocol }) + "\n");
} finally {
  await client.close();
}
