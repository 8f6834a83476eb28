"""A toy world for the checks: a buyer and a seller haggle over one item, round by round.

It joins the tool with this folder and the registry row below, as a world shipped in another
package would (`register(ROW)`, or `SIM_WORLDS=market_world:ROW` for a process tree).
"""

from simulator.worlds import WorldRow

ROW = WorldRow("market", "market_world", "a two-agent market")
