// One step of the Agent Protocol flow with the JS @langchain/langgraph-sdk, printed as JSON
// for tests/e2e/test_agent_protocol_js.py: `node flow.mjs STEP URL KEY [THREAD]`.
import { Client } from "@langchain/langgraph-sdk";

const [step, apiUrl, apiKey, threadId] = process.argv.slice(2);
const client = new Client({ apiUrl, apiKey });
const streamMode = ["values", "messages-tuple", "custom"];

async function collect(thread, payload) {
  const parts = [];
  for await (const part of client.runs.stream(thread, "opsgraph", { ...payload, streamMode })) {
    parts.push({ event: part.event, data: part.data });
  }
  return parts;
}

async function run() {
  if (step === "ask") {  // a new thread, one message
    const thread = await client.threads.create();
    const parts = await collect(thread.thread_id, {
      input: { messages: [{ type: "human", content: "Please see to it." }] } });
    return { thread_id: thread.thread_id, parts };
  }
  if (step === "state") {
    const state = await client.threads.getState(threadId);
    const interrupted = await client.threads.search({ status: "interrupted" });
    return { state, interrupted: interrupted.map((t) => t.thread_id) };
  }
  if (step === "resume") {
    try {
      const parts = await collect(threadId, {
        command: { resume: [{ type: "accept", args: null }] } });
      return { parts };
    } catch (error) {
      return { error: { status: error.status ?? null, message: String(error.message) } };
    }
  }
  throw new Error(`unknown step ${step}`);
}

console.log(JSON.stringify(await run()));
