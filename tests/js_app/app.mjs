// A LangGraph.js agent, as an application would run it: a ReAct agent with one tool,
// interrupted before its tools, on @langchain/langgraph-checkpoint-postgres or
// @langchain/langgraph-checkpoint-sqlite (better-sqlite3). The chat
// model is LangChain's fake one, scripted, and checks the pairing rule as a provider does.
//
//   node app.mjs turn THREAD TEXT   one user turn; prints the outcome as one JSON line
//   node app.mjs resume THREAD      resume an interrupted turn (runs the pending tools)
//   node app.mjs state THREAD       the thread's messages and next nodes
//   node app.mjs ask THREAD         a node asks a human two questions: the first is asked
//   node app.mjs answer THREAD TEXT answer the open question (Command({ resume: TEXT }))
//   node app.mjs delta THREAD TEXT  one turn of a chat graph whose messages are a delta
//                                   channel (MessagesDeltaValue); prints its messages.
//                                   "call CITY" makes a tool call nothing answers
//   node app.mjs regenerate THREAD  that graph's last answer made again, from the
//                                   checkpoint before it (a run from an older checkpoint)
//
// Environment: JS_APP_SQLITE_PATH (a SQLite file: its saver is used), else JS_APP_REDIS_URL
// (a redis:// URL: @langchain/langgraph-checkpoint-redis), else JS_APP_POSTGRES_URI (a
// postgresql:// URI) and JS_APP_SCHEMA (the tables' schema).
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { RedisSaver } from "@langchain/langgraph-checkpoint-redis";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import {
  Annotation,
  Command,
  DeltaValue,
  END,
  MessagesDeltaValue,
  START,
  StateGraph,
  StateSchema,
  interrupt,
} from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

/** The provider's rule: every tool call is answered by the tool messages right after it. */
function checkPairing(messages) {
  for (let i = 0; i < messages.length; i += 1) {
    const message = messages[i];
    const type = message._getType();
    if (type === "tool" && !answersPrevious(messages, i)) {
      throw new Error(`400 tool message ${message.tool_call_id} answers no tool call`);
    }
    if (type !== "ai" || !message.tool_calls?.length) continue;
    const answered = new Set();
    for (let j = i + 1; j < messages.length && messages[j]._getType() === "tool"; j += 1) {
      answered.add(messages[j].tool_call_id);
    }
    const missing = message.tool_calls.map((call) => call.id).filter((id) => !answered.has(id));
    if (missing.length > 0) {
      throw new Error(
        "400 An assistant message with 'tool_calls' must be followed by tool messages " +
          `responding to each 'tool_call_id'. Missing: ${missing.join(", ")}`,
      );
    }
  }
}

function answersPrevious(messages, index) {
  let j = index - 1;
  while (j >= 0 && messages[j]._getType() === "tool") j -= 1;
  const call = j >= 0 ? messages[j] : undefined;
  const id = messages[index].tool_call_id;
  return call?._getType() === "ai" && (call.tool_calls ?? []).some((c) => c.id === id);
}

/** LangChain's fake chat model, scripted: "weather in X" calls the tool, a result is summed up. */
class ScriptedChatModel extends FakeChatModel {
  bindTools() {
    return this;
  }

  async _generate(messages) {
    checkPairing(messages);
    const last = messages[messages.length - 1];
    const text = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
    const turn = messages.filter((m) => m._getType() === "ai").length;
    let reply;
    if (last._getType() === "tool") {
      reply = new AIMessage({ content: `The tool says: ${text}`, id: `ai-${turn}` });
    } else if (text.startsWith("weather in ")) {
      const city = text.slice("weather in ".length);
      reply = new AIMessage({
        content: "",
        id: `ai-${turn}`,
        tool_calls: [{ id: `call_${turn}`, name: "get_weather", args: { city }, type: "tool_call" }],
      });
    } else {
      reply = new AIMessage({ content: `You said: ${text}`, id: `ai-${turn}` });
    }
    return { generations: [{ message: reply, text: String(reply.content) }] };
  }
}

const getWeather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "The weather in a city.",
  schema: z.object({ city: z.string() }),
});

function describe(messages) {
  return messages.map((m) => ({
    type: m._getType(),
    content: m.content,
    tool_calls: m.tool_calls,
    tool_call_id: m.tool_call_id,
  }));
}

/** The saver the environment names: a SQLite file, a Redis server or a PostgreSQL schema. */
async function openCheckpointer() {
  if (process.env.JS_APP_SQLITE_PATH) {
    return SqliteSaver.fromConnString(process.env.JS_APP_SQLITE_PATH);
  }
  if (process.env.JS_APP_REDIS_URL) {
    return RedisSaver.fromUrl(process.env.JS_APP_REDIS_URL);
  }
  return PostgresSaver.fromConnString(process.env.JS_APP_POSTGRES_URI, {
    schema: process.env.JS_APP_SCHEMA ?? "public",
  });
}

/** A node that asks a human two questions, one after the other. */
function askingGraph(checkpointer) {
  const State = Annotation.Root({ out: Annotation() });
  const ask = () => {
    const first = interrupt("q1");
    const second = interrupt("q2");
    return { out: `q1 got ${first}, q2 got ${second}` };
  };
  return new StateGraph(State)
    .addNode("ask", ask)
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer });
}

async function asking(checkpointer, command, config, text) {
  const graph = askingGraph(checkpointer);
  await graph.invoke(command === "ask" ? {} : new Command({ resume: text }), config);
  const state = await graph.getState(config);
  const questions = state.tasks.flatMap((task) => task.interrupts ?? []);
  return { ok: true, out: state.values.out ?? null, interrupts: questions };
}

/** A chat node over a delta `messages` channel, as a deep agent keeps its messages. */
async function deltaTurn(checkpointer, config, text, regenerate = false) {
  // MessagesDeltaValue, snapshotting every 3 updates (100 by default) so that a few
  // turns hold a snapshot of LangGraph.js's own
  const messages = new DeltaValue(MessagesDeltaValue.valueSchema, {
    inputSchema: MessagesDeltaValue.inputSchema,
    reducer: MessagesDeltaValue.reducer,
    snapshotFrequency: 3,
  });
  const State = new StateSchema({ messages });
  const chat = (state) => {
    const turn = state.messages.filter((m) => m._getType() === "ai").length;
    const calls = text.startsWith("call ")  // a call no tool answers: the thread is broken
      ? [{ id: `call_${turn}`, name: "get_weather", args: { city: text.slice(5) }, type: "tool_call" }]
      : [];
    const reply = regenerate
      ? new AIMessage({ content: "Said again", id: `ai-${turn}-again` })
      : new AIMessage({ content: `You said: ${text}`, id: `ai-${text}`, tool_calls: calls });
    return { messages: [reply] };
  };
  const graph = new StateGraph(State)
    .addNode("chat", chat)
    .addEdge(START, "chat")
    .addEdge("chat", END)
    .compile({ checkpointer });
  if (regenerate) {
    for await (const past of graph.getStateHistory(config)) {
      if (past.next.includes("chat")) {
        await graph.invoke(null, past.config);
        break;
      }
    }
  } else if (text) {
    await graph.invoke({ messages: [{ role: "user", content: text, id: `h-${text}` }] }, config);
  }
  const state = await graph.getState(config);
  return { ok: true, messages: describe(state.values.messages ?? []) };
}

async function main() {
  const [command, threadId, text] = process.argv.slice(2);
  const checkpointer = await openCheckpointer();
  if (!(checkpointer instanceof RedisSaver)) await checkpointer.setup();
  if (["ask", "answer", "delta", "regenerate"].includes(command)) {
    const config = { configurable: { thread_id: threadId } };
    try {
      const done =
        command === "delta" || command === "regenerate"
          ? await deltaTurn(checkpointer, config, text ?? "", command === "regenerate")
          : await asking(checkpointer, command, config, text);
      console.log(JSON.stringify(done));
    } finally {
      if (checkpointer instanceof SqliteSaver) checkpointer.db.close();
      else await checkpointer.end();
    }
    return;
  }
  const agent = createReactAgent({
    llm: new ScriptedChatModel({}),
    tools: [getWeather],
    checkpointer,
    interruptBefore: ["tools"],
  });
  const config = { configurable: { thread_id: threadId } };
  try {
    if (command === "turn") {
      await agent.invoke({ messages: [{ role: "user", content: text }] }, config);
    } else if (command === "resume") {
      await agent.invoke(null, config);
    } else if (command !== "state") {
      throw new Error(`unknown command ${command}`);
    }
    const state = await agent.getState(config);
    console.log(JSON.stringify({ ok: true, next: state.next, messages: describe(state.values.messages ?? []) }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, error: String(error?.message ?? error) }));
    process.exitCode = 1;
  } finally {
    if (checkpointer instanceof SqliteSaver) checkpointer.db.close();
    else await checkpointer.end();
  }
}

await main();
