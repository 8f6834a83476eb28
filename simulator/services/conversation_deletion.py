"""Deleting a conversation, and who may delete a fork.

A fork reads its first messages from its parent (store/lineage.py), so a conversation with
forks cannot go alone. The rule, the same as for experiments (whose owner deletes every
conversation of them, colleagues' included): the owner of a conversation may delete it together
with every fork below it, whoever made them, when they ask for that (`--with-forks`; the
confirmation lists and counts the forks); a fork's owner may delete their own fork (with its
forks, the same way). Nobody deletes someone else's conversation on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.analysis.scope import family
from simulator.domain.fork import MAX_FORK_DEPTH
from simulator.errors import PermissionRefused, UserError
from simulator.store import cascade
from simulator.store.foreign import plural
from simulator.store.store import Store

SHOWN = 5  # forks named in a message; the rest are counted


@dataclass
class Deletion:
    """What deleting one conversation removes: itself, the forks below it and their rows."""

    conversation_id: str
    user: str
    forks: list[dict]  # {_id, owner} of every fork below it, depth first
    counts: cascade.Cascade

    def question(self) -> str:
        """'Delete conv_1 with its 4 messages and 6 calls?'; with forks, they are named."""
        return f"Delete {self._what()}?"

    def done_message(self) -> str:
        return f"Deleted {self._what()}."

    def _what(self) -> str:
        listed = self.counts.phrase(include_conversations=False)
        if not self.forks:
            return f"{self.conversation_id}{f' with its {listed}' if listed else ''}"
        forks = f"{plural(len(self.forks), 'fork')} ({fork_list(self.forks, self.user)})"
        return f"{self.conversation_id} and its {forks}{f' with their {listed}' if listed else ''}"


def fork_list(forks: list[dict], user: str) -> str:
    """ "your conv_2, bob's conv_3 and 4 more": each fork and whose it is."""
    names = [
        f"your {doc['_id']}" if doc.get("owner") == user else f"{doc.get('owner')}'s {doc['_id']}"
        for doc in forks[:SHOWN]
    ]
    if len(forks) > SHOWN:
        names.append(f"{len(forks) - SHOWN} more")
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def plan(store: Store, conversation_id: str, user: str, with_forks: bool = False) -> Deletion:
    """What deleting this conversation would remove; refused unless `user` owns it, and, when
    it has forks, unless `with_forks` says to delete them too."""
    doc = store.conversations.get(conversation_id)
    if doc["owner"] != user:
        raise _not_yours(store, doc, user)
    below = family(store, conversation_id, doc.get("experiment_id"))[1:]
    forks = [_owner_of(store, fork_id) for fork_id in below]
    if forks and not with_forks:
        raise UserError(
            f"{conversation_id} has {plural(len(forks), 'fork')} ({fork_list(forks, user)}) "
            f"that {'reads' if len(forks) == 1 else 'read'} the first messages from it; "
            "deleting it alone would cut "
            + ("the fork's transcript" if len(forks) == 1 else "the forks' transcripts"),
            field="--with-forks",
            fix=_fix(conversation_id, forks, user),
        )
    everything = [{"_id": conversation_id, "owner": doc["owner"]}, *forks]
    return Deletion(
        conversation_id, user, forks, cascade.count_conversations(store.db, everything, user)
    )


def delete(store: Store, conversation_id: str, user: str, with_forks: bool = False) -> Deletion:
    """Delete the conversation (with its forks when asked) and their messages, calls,
    summaries, scores and the stored prompts nothing uses any more. Returns what was removed."""
    deletion = plan(store, conversation_id, user, with_forks)
    ids = [conversation_id, *(doc["_id"] for doc in deletion.forks)]
    cascade.delete_conversations(store.db, ids)
    return deletion


def _not_yours(store: Store, doc: dict, user: str) -> PermissionRefused:
    """Only the owner deletes a conversation; a fork of the user's own conversation goes with
    it (`--with-forks` on theirs), which the refusal says."""
    fix = f"ask {doc['owner']} to delete it"
    ancestor = doc
    for _ in range(MAX_FORK_DEPTH):
        if not ancestor.get("fork_of"):
            break
        ancestor = store.conversations.get(ancestor["fork_of"])
        if ancestor["owner"] == user:
            fix += (
                f", or delete your {ancestor['_id']} that it was forked from together with "
                f"its forks: llm-sim conversation delete {ancestor['_id']} --with-forks"
            )
            break
    return PermissionRefused(
        f"conversation {doc['_id']} belongs to {doc['owner']!r}; only its owner may delete it "
        f"on its own (you are {user!r})",
        fix=fix,
    )


def _owner_of(store: Store, conversation_id: str) -> dict:
    return {"_id": conversation_id, "owner": store.conversations.get(conversation_id)["owner"]}


def _fix(conversation_id: str, forks: list[dict], user: str) -> str:
    others = sorted({d["owner"] for d in forks if d.get("owner") != user})
    fix = (
        f"add --with-forks to delete {conversation_id} with its forks (its owner may delete "
        "the forks of it, whoever made them; the confirmation lists them), or delete the forks "
        "first"
    )
    mine = [d["_id"] for d in forks if d.get("owner") == user]
    if mine:
        fix += f" (yours: llm-sim conversation delete {mine[-1]})"
    if others:
        fix += f"; {' and '.join(others)} may delete their own"
    return fix
