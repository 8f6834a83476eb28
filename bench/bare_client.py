"""The floor process for bench/sweep_cli.py: send the given chat prompts through the bare openai
client with N workers, as a script a researcher would write, and exit.

    python bench/bare_client.py --base-url URL --prompts prompts.json --concurrency 32 [--lean]

`prompts.json` is a JSON list of message lists. Prints the number of replies. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json

import openai


async def send_all(
    base_url: str, model: str, prompts: list[list[dict]], concurrency: int, lean: bool
) -> int:
    """`lean`: post the body as-is and read the reply as JSON (`client.post`), skipping the
    client's request transform and response models: the cheapest call through the client."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0, timeout=120.0)
    queue: asyncio.Queue[list[dict]] = asyncio.Queue()
    for prompt in prompts:
        queue.put_nowait(prompt)
    replies = 0

    async def worker() -> None:
        nonlocal replies
        while not queue.empty():
            messages = queue.get_nowait()
            if lean:
                raw = await client.post(
                    "/chat/completions", cast_to=bytes, body={"model": model, "messages": messages}
                )
                assert json.loads(raw)["choices"][0]["message"]["content"] is not None
            else:
                resp = await client.chat.completions.create(model=model, messages=messages)
                assert resp.choices[0].message.content is not None
            replies += 1

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await client.close()
    return replies


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", default="stub")
    p.add_argument("--prompts", required=True)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--lean", action="store_true", help="skip the transform and response models")
    args = p.parse_args()
    with open(args.prompts, encoding="utf-8") as f:
        prompts = json.load(f)
    print(asyncio.run(send_all(args.base_url, args.model, prompts, args.concurrency, args.lean)))


if __name__ == "__main__":
    main()
