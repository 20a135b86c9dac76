"""Calls `retrysim endpoint configs/endpoint-llm.toml`'s model through the OpenAI or Anthropic SDK.

    python clients/chat.py URL CLIENT [CALLS]

CLIENT is `openai` or `anthropic` (a whole answer), or `openai-stream` or `anthropic-stream` (a
streamed one), the SDK at its defaults. Each call's id goes in an `X-Call-Id` header, so the
endpoint counts its attempts.
"""

import sys

import anthropic
import openai


def call_anthropic(sdk, client, call):
    messages = [{"role": "user", "content": f"call {call}"}]
    headers = {"X-Call-Id": f"call-{call}"}
    if client == "anthropic-stream":
        with sdk.messages.stream(model="m", max_tokens=256, messages=messages,
                                 extra_headers=headers) as stream:
            "".join(stream.text_stream)
    else:
        sdk.messages.create(model="m", max_tokens=256, messages=messages, extra_headers=headers)


def main():
    url, client = sys.argv[1].rstrip("/") + "/llm", sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    if client.startswith("anthropic"):
        sdk = anthropic.Anthropic(base_url=url, api_key="unused", default_headers={"X-Client": client})
        failed = 0
        for call in range(calls):
            try:
                call_anthropic(sdk, client, call)
            except anthropic.AnthropicError:
                failed += 1
        print(f"{client}: {calls} calls, {failed} failed as far as the client knows")
        return
    sdk = openai.OpenAI(base_url=url + "/v1", api_key="unused", default_headers={"X-Client": client})
    failed = 0
    for call in range(calls):
        messages = [{"role": "user", "content": f"call {call}"}]
        headers = {"X-Call-Id": f"call-{call}"}
        try:
            if client == "openai-stream":
                stream = sdk.chat.completions.create(model="m", messages=messages, stream=True,
                                                     extra_headers=headers)
                "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            else:
                sdk.chat.completions.create(model="m", messages=messages, extra_headers=headers)
        except openai.OpenAIError:
            failed += 1
    print(f"{client}: {calls} calls, {failed} failed as far as the client knows")


if __name__ == "__main__":
    main()
