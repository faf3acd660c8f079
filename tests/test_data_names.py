import pytest

from datasolver.data.names import canonical_name, natural_key

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize(
    "source, expected",
    [
        ("Members", "members"),
        ("2024 Sales", "t_2024_sales"),
        ("公司名单(最终)", "公司名单_最终_"),
        ("公募基金经理(新)", "公募基金经理_新_"),
        ("a  b", "a__b"),  # one for one, no collapsing
        ("unicorns till sep 2022", "unicorns_till_sep_2022"),
        ("finance-loan-approval", "finance_loan_approval"),
        ("df_Orders", "df_orders"),
        ("sales 😀", "sales__"),
        ("全角\u3000空格", "全角_空格"),
    ],
)
def test_canonical_name_rule(source, expected):
    assert canonical_name(source) == expected


def test_natural_sort_puts_task_2_before_task_10():
    names = ["task_10", "task_2", "task_1", "task_b", "task_a"]
    assert sorted(names, key=natural_key) == ["task_1", "task_2", "task_10", "task_a", "task_b"]


def test_table_names_are_a_pure_function_of_the_sources() -> None:
    from datasolver.data.names import TableNaming, assign_table_names

    sources = [("Orders", "orders", "orders.csv"), ("orders", "archive", "archive.db"),
               ("orders", "archive", "archive.db"), ("df_x", "x", "x.csv"), ("x", "x2", "x2.json"),
               ("Sales 2024", "s", "s.db"), ("orders", "orders", "orders.parquet"), ("orders", "orders", "orders.csv.gz"),
               ("orders", "orders", "orders.parquet")]
    assert assign_table_names(sources) == [
        TableNaming("orders", ("df_orders",)),  # "Orders" is the name itself, case aside
        TableNaming("archive__orders", ("df_archive__orders",)),  # a repeat gets its file's stem
        TableNaming("archive__orders_2", ("df_archive__orders_2",)),  # then a number
        TableNaming("df_x", ("df_df_x",)),
        TableNaming("x", ()),  # "df_x" is another table's name, so not an alias of x
        TableNaming("sales_2024", ("Sales 2024", "df_sales_2024")),
        TableNaming("orders_parquet", ("df_orders_parquet",)),  # named after its file: the whole file name
        TableNaming("orders_csv_gz", ("df_orders_csv_gz",)),
        TableNaming("orders_parquet_2", ("df_orders_parquet_2",)),  # then a number
    ]
    assert assign_table_names(sources) == assign_table_names(list(sources))  # no state between calls
