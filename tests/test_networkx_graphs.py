"""networkx interop: AMR and dependency graphs, candidate paths and subgraphs to and from
networkx.DiGraph, and the path and Zelenko kernels on networkx graphs."""

import subprocess
import sys

import numpy as np
import pytest
import spacy
from data_paths import ROOT, require_extra
from spacy.tokens import DocBin

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.data import sample_path
from spacy_convkernels.errors import InvalidGraphError, MissingDependencyError
from spacy_convkernels.kernels import SubsequencePathKernel, ZelenkoTreeKernel
from spacy_convkernels.structures import (
    PathTuples,
    SemanticGraph,
    find_candidates,
    graph_from_networkx,
    graph_to_networkx,
    path_from_networkx,
    path_to_networkx,
    tree_from_networkx,
    tree_to_networkx,
)

nx = require_extra("networkx", "networkx", module_level=True)

# edges in PENMAN order, not grouped by source (h's third edge comes after p's and s's)
AMR = """
(h / have-03
   :ARG0 (p / protein-family :name (n / name :op1 "GEF")
         :example (p2 / protein :name (n2 / name :op1 "Sos")))
   :ARG1 (s / site
         :purpose (b / bind-01
               :ARG1 (e / enzyme :name (n3 / name :op1 "Ras"))
               :ARG2 p2))
   :time (a / activate-01 :ARG0 p2 :ARG1 e))
"""


@pytest.fixture(scope="module")
def parsed():
    nlp = spacy.blank("en")
    return list(DocBin().from_disk(sample_path("parses")).get_docs(nlp.vocab))


def candidates(graph: SemanticGraph) -> list:
    return list(find_candidates(graph, participant_nodes=[n for n, label in graph.labels.items() if label != "site"]))


def test_an_amr_graph_round_trips_with_its_labels_names_and_edge_order():
    graph = SemanticGraph.from_penman(AMR)
    G = graph_to_networkx(graph)
    assert isinstance(G, nx.DiGraph) and not G.is_multigraph()
    assert G.nodes["p2"] == {"label": "protein", "name": "Sos"} and G.nodes["h"] == {"label": "have"}
    assert G.edges["b", "p2"]["label"] == "arg2" and G.edges["a", "e"]["label"] == "arg1"
    assert [e for *_, e in G.edges(data="label")] != [role for _, role, _ in graph.edges]  # networkx groups by source
    back = graph_from_networkx(G)
    assert back == graph and back.edges == graph.edges
    assert [c.path for c in candidates(back)] == [c.path for c in candidates(graph)]
    assert nx.shortest_path_length(G.to_undirected(), "a", "s") == 2  # networkx's algorithms on what the package reads


def test_a_dependency_graph_round_trips(parsed):
    for doc in parsed[:10]:
        graph = SemanticGraph.from_span(doc[:])
        G = graph_to_networkx(graph)
        root = next(t for t in doc if t.head.i == t.i)
        assert G.nodes[str(root.i)]["label"] == (root.lemma_ or root.text).lower()
        assert {(s, d["label"], t) for s, t, d in G.edges(data=True)} == set(graph.edges)
        assert nx.is_tree(G.to_undirected()) and graph_from_networkx(G) == graph


def test_two_edges_between_the_same_nodes_make_a_multidigraph():
    graph = SemanticGraph({"a": "bind", "b": "protein"}, (("a", "arg1", "b"), ("a", "arg2", "b")))
    G = graph_to_networkx(graph)
    assert G.is_multigraph() and G.number_of_edges() == 2
    assert graph_from_networkx(G) == graph


def test_a_graph_made_with_networkx_reads_in_networkx_order():
    G = nx.DiGraph()
    G.add_node(1, label="bind")
    G.add_node(2, label="protein", name="RAS")
    G.add_edge(1, 2, label="arg1")
    assert graph_from_networkx(G) == SemanticGraph({"1": "bind", "2": "protein"}, (("1", "arg1", "2"),), {"2": "RAS"})


def test_candidate_paths_and_subgraphs_round_trip():
    found = candidates(SemanticGraph.from_penman(AMR))
    assert len(found) > 3
    for candidate in found:
        P, T = path_to_networkx(candidate.path), tree_to_networkx(candidate.subgraph)
        assert path_from_networkx(P) == candidate.path and tree_from_networkx(T) == candidate.subgraph
        assert [P.nodes[i]["label"] for i in P] == [node for _, node in candidate.path.tuples]
        assert nx.is_arborescence(T) and T.nodes[0]["label"] == candidate.interaction


def test_a_path_drawn_with_networkx_reads_the_edge_into_each_node():
    G = nx.DiGraph()
    G.add_edge("x", "y", label="arg0-of")
    G.add_edge("y", "z", label="arg1")
    for node, label in (("x", "protein"), ("y", "bind"), ("z", "protein")):
        G.nodes[node]["label"] = label
    assert path_from_networkx(G) == PathTuples([("", "protein"), ("arg0-of", "bind"), ("arg1", "protein")])


def test_the_path_and_zelenko_kernels_take_networkx_graphs():
    found = candidates(SemanticGraph.from_penman(AMR))
    paths, trees = [c.path for c in found], [c.subgraph for c in found]
    for kernel, structures, to_networkx in (
        (SubsequencePathKernel(lam=0.5), paths, path_to_networkx),
        (ZelenkoTreeKernel(lam=0.5), trees, tree_to_networkx),
    ):
        graphs = [to_networkx(s) for s in structures]
        np.testing.assert_array_equal(kernel.gram(graphs), kernel.gram(structures))
        np.testing.assert_array_equal(
            kernel.gram(graphs[:2], kernel.prepare(structures)), kernel.gram(structures[:2], structures)
        )
        assert kernel(graphs[0], structures[1]) == kernel(structures[0], structures[1])
        vectors = Nystroem(kernel, n_components=3, random_state=0).fit(graphs).transform(graphs)
        np.testing.assert_array_equal(
            vectors, Nystroem(kernel, n_components=3, random_state=0).fit(structures).transform(structures)
        )


EDGE = {"label": "arg1"}


@pytest.mark.parametrize(
    "make, convert, message",
    [
        (lambda: nx.Graph([(1, 2)]), path_from_networkx, "expected a networkx DiGraph, got Graph"),
        (lambda: nx.DiGraph([(1, 2), (1, 3)]), path_from_networkx, "one directed path"),
        (lambda: nx.DiGraph([(1, 2, EDGE), (3, 4, EDGE), (4, 3, EDGE)]), path_from_networkx, "not a path and cycles"),
        (lambda: nx.DiGraph([(1, 2), (3, 2)]), tree_from_networkx, "rooted tree"),
        (lambda: nx.DiGraph([(1, 2)]), graph_from_networkx, "node 1 of the networkx graph has no 'label'"),
        (lambda: nx.DiGraph(), path_from_networkx, "empty"),
    ],
)
def test_graphs_that_are_not_the_structure_are_package_errors(make, convert, message):
    with pytest.raises(InvalidGraphError, match=message):
        convert(make())
    if convert is path_from_networkx:
        with pytest.raises(InvalidGraphError, match=message):
            SubsequencePathKernel().gram([make()])


def test_an_edge_label_with_the_tuple_separator_is_refused_for_trees():
    G = nx.DiGraph()
    G.add_node(0, label="bind")
    G.add_node(1, label="protein")
    G.add_edge(0, 1, label="a/b")
    with pytest.raises(InvalidGraphError, match="cannot hold '/'"):
        tree_from_networkx(G)


def test_without_networkx_the_conversion_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "networkx", None)  # import networkx raises ImportError
    with pytest.raises(MissingDependencyError, match=r"spacy-convkernels\[networkx\]"):
        graph_to_networkx(SemanticGraph.from_penman(AMR))


@pytest.mark.slow
def test_networkx_stays_off_the_kernels_path():
    """Importing the package's structures and kernels, and computing, imports no networkx."""
    script = (
        "import sys\n"
        "from spacy_convkernels.structures import amr_candidates\n"
        "from spacy_convkernels.kernels import SubsequencePathKernel\n"
        f"paths = [c.path for c in amr_candidates({AMR!r})]\n"
        "SubsequencePathKernel().gram(paths)\n"
        "print('networkx' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
